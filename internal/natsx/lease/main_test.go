package lease_test

import (
	"os"
	"testing"

	"github.com/plasmodium/pm/internal/hub/hubtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(netnsEnv) == "holder" { // TestCutOffHolderInNetns's holder A
		os.Exit(holder(os.Stdin, os.Stdout))
	}
	os.Exit(hubtest.Main(m))
}
