package lite_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/cli"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/lite"
)

var update = flag.Bool("update", false, "rewrite help.txt from pm-full's help")

// pm --help is printed by the small executable from help.txt: it must be
// pm-full's own help, byte for byte.
func TestHelpText(t *testing.T) {
	var out, errOut bytes.Buffer
	f := cmdutil.New(context.Background(), strings.NewReader(""), &out, &errOut)
	if code := cli.Run(f, []string{"--help"}); code != 0 {
		t.Fatalf("pm-full --help: exit %d\n%s", code, errOut.String())
	}
	if *update {
		if err := os.WriteFile("help.txt", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{nil, {"--help"}, {"-h"}, {"help"}} {
		var got bytes.Buffer
		p := lite.Process{Stdout: &got, Stderr: &got, Getenv: func(string) string { return "" },
			Full: func([]string) int { t.Fatalf("pm %v went to pm-full", args); return 1 }}
		if code := lite.Run(p, args); code != 0 || got.String() != out.String() {
			t.Errorf("pm %v: exit %d, output differs from pm-full --help (go test ./internal/lite -update rewrites help.txt):\n%s", args, code, got.String())
		}
	}
}

// What lite runs and what it hands on, decided from the arguments alone
// (the cases it runs need a state directory and are covered end to end by
// every testscript script, which runs through cmd/pm).
func TestHandedToFull(t *testing.T) {
	for _, args := range [][]string{
		{"status"}, {"task", "x"}, {"--version"},
		{"say"},                 // no message: cobra's usage error
		{"say", "--bogus", "x"}, // a flag lite does not know
		{"say", "-h"}, {"say", "--help"},
		{"chat", "--follow"}, {"chat", "-f"}, {"chat", "--wait"}, {"chat", "--task", "tk-aaaaaa"},
		{"chat", "extra"},      // cobra.NoArgs
		{"--json", "say", "x"}, // a flag before the command
		{"help", "say"},
	} {
		handed := false
		p := lite.Process{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" },
			Getwd: func() (string, error) {
				t.Fatalf("pm %q looked for a state directory before handing on", args)
				return "", nil
			},
			Full: func(got []string) int { handed = strings.Join(got, " ") == strings.Join(args, " "); return 7 }}
		if code := lite.Run(p, args); code != 7 || !handed {
			t.Errorf("pm %q: exit %d, handed on unchanged: %v; want pm-full to run it", args, code, handed)
		}
	}
}

// The small executable must stay small: none of these may be linked into
// cmd/pm (each brings init work or megabytes of code to every pm say).
func TestLiteStaysLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/pm").Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	banned := []string{"net/http", "crypto/tls", "text/template", "github.com/spf13/cobra",
		"github.com/plasmodium/pm/internal/agent", "github.com/plasmodium/pm/internal/ops",
		"github.com/plasmodium/pm/internal/gitx", "github.com/plasmodium/pm/internal/llm",
		"github.com/plasmodium/pm/internal/sandbox", "github.com/plasmodium/pm/internal/tui",
		"github.com/plasmodium/pm/internal/task", "github.com/plasmodium/pm/internal/cli",
		"github.com/go-git/", "github.com/sashabaranov/", "github.com/charmbracelet/",
		"github.com/modelcontextprotocol/", "github.com/google/jsonschema-go", "gopkg.in/yaml",
		"github.com/landlock-lsm/", "encoding/gob",
		// the hub's server (issue 24) is pm-hub's alone; its client
		// (nats.go) links net and crypto/tls, banned above
		"github.com/nats-io/nats-server/",
		// nor the client: a project on a hub is pm-full's (stateopen.HubLinked)
		"github.com/nats-io/", "github.com/plasmodium/pm/internal/natsx",
		"github.com/plasmodium/pm/internal/state/natsstate", "github.com/plasmodium/pm/internal/state/hubopen",
		// the driver and what it needs: store.Agent embeds only driver/handle
		"github.com/plasmodium/pm/internal/driver", "os/exec",
		// ids draw from the runtime, the config digest is FNV, the broker's
		// client dials with system calls: no crypto in a short command
		"crypto/rand", "crypto/sha256", "crypto/subtle",
		// lite parses its two flags itself (cmdline.go): pflag links net
		"net", "github.com/spf13/pflag"}
	for _, d := range deps {
		for _, b := range banned {
			if d == b || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b) {
				t.Errorf("cmd/pm links %s", d)
			}
		}
	}
}
