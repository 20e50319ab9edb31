package lease_test

import (
	"os"
	"testing"

	"github.com/plasmodium/pm/internal/hub/hubtest"
)

func TestMain(m *testing.M) {
	os.Exit(hubtest.Main(m))
}
