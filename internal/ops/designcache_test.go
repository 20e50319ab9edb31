package ops

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/state/fsstate"
)

// Code the models wrote must not write the user's Go build cache: Go trusts
// its cache, so an entry planted there would be linked into the user's own
// later builds. The commands pm runs on that code (the test tool, --eval's
// go test) get a build cache of pm's own, under the user cache directory.
func TestConfinedGoCacheIsPms(t *testing.T) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Skip("no go:", err)
	}
	real, _ := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	cacheHome := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	sesss := newStore(t)
	sess := &Session{Store: sesss, State: fsstate.New(sesss)}
	dir, tmp := t.TempDir(), t.TempDir()
	p := confinedPolicy(context.Background(), sess, dir, tmp)
	if real != "" && slices.Contains(p.Writable, real) {
		t.Fatalf("the user's GOCACHE %s is writable to model code: %v", real, p.Writable)
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(cacheHome, "pm", "go-build"))
	if !slices.Contains(p.Writable, want) {
		t.Fatalf("pm's own build cache %s not writable: %v", want, p.Writable)
	}
	if env := confinedGoEnv(tmp); !slices.Contains(env, "GOCACHE="+filepath.Join(cacheHome, "pm", "go-build")) {
		t.Fatalf("the command's environment does not point Go at pm's cache: %v", env)
	}
}
