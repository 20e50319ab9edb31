package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// screenEnv is what a program started in tmux sees of the script's
// environment (tmux starts it from its own server, not from the script).
var screenEnv = []string{"PATH", "HOME", "GORACE", "OPENAI_BASE_URL", "OPENAI_API_KEY", "PM_MODEL",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}

// screen drives a program on a real terminal, in a tmux server private to
// the script ($WORK/tmux.sock), 100x30:
//
//	screen start cmd args...  start cmd in the current directory; when it
//	                          ends, the screen shows [exit CODE]
//	screen type text          type text (literally)
//	screen key name...        press keys by tmux name (Enter, Escape, C-c, y)
//	screen wait regexp        block until the screen shows a line matching
//	                          regexp (! screen wait: until none does)
//	screen dump file          write the screen's text to file
//
// There is no event for what a terminal shows, so wait polls capture-pane
// with a generous deadline that only guards against a hung script.
func cmdScreen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: screen start cmd... | type text | key name... | wait regexp | dump file")
	}
	sock := filepath.Join(ts.Getenv("WORK"), "tmux.sock")
	tmux := func(a ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, a...)...).CombinedOutput()
		if err != nil {
			ts.Fatalf("tmux %s: %v\n%s", strings.Join(a, " "), err, out)
		}
		return string(out)
	}
	switch args[0] {
	case "start":
		a := []string{"new-session", "-d", "-s", "pm", "-x", "100", "-y", "30", "-c", ts.MkAbs(".")}
		a = append(a, "env", "TERM=xterm-256color")
		for _, k := range screenEnv {
			a = append(a, k+"="+ts.Getenv(k))
		}
		// The shell stays after the program so its exit shows on the screen.
		a = append(a, "sh", "-c", `"$@"; echo "[exit $?]"; exec sleep 3600`, "sh")
		tmux(append(a, args[1:]...)...)
		ts.Defer(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	case "type":
		tmux("send-keys", "-t", "pm", "-l", strings.Join(args[1:], " "))
	case "key":
		tmux(append([]string{"send-keys", "-t", "pm"}, args[1:]...)...)
	case "wait":
		re, err := regexp.Compile("(?m)" + args[1])
		ts.Check(err)
		deadline := time.Now().Add(60 * time.Second)
		for {
			screen := tmux("capture-pane", "-p", "-t", "pm")
			if re.MatchString(screen) != neg {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("screen wait %q: timed out; screen now:\n%s", args[1], screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
	case "dump":
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(tmux("capture-pane", "-p", "-t", "pm")), 0o644))
	default:
		ts.Fatalf("usage: screen start cmd... | type text | key name... | wait regexp | dump file")
	}
}
