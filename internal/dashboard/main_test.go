package dashboard_test

import (
	"os"
	"testing"

	"github.com/plasmodium/pm/internal/cli"
)

// pmEnv makes the test binary run as pm itself (tests start it with it
// set, as a shell would start pm), so a test drives the dashboard from a
// separate pm process without building the binary.
const pmEnv = "PM_DASHBOARD_TEST_AS_PM"

func TestMain(m *testing.M) {
	if os.Getenv(pmEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
