package capability_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// What a model may not do even inside the workspace: touch pm's state, rewrite
// .git or the project's prompt objects, or hang on a FIFO.
func TestPrimitivesHardening(t *testing.T) {
	env, ws, _ := workspace(t)
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, "prompts"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "prompts", "owner.md"), []byte("---\nname: owner\n---\nmine\n"), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644))
	all := obj("read_file", "list_files", "write_file")
	read, list, write := tool(t, env, all, "read_file"), tool(t, env, all, "list_files"), tool(t, env, all, "write_file")
	cases := []struct {
		name string
		tl   func() string
		want []string
	}{
		{"read state", func() string { return call(t, read, m{"path": ".plasmodium/config.json"}) }, []string{"bad arguments", "pm's state directory"}},
		{"list state", func() string { return call(t, list, m{"path": ".plasmodium/agents"}) }, []string{"pm's state directory"}},
		{"write .git hook", func() string {
			return call(t, write, m{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nexit 0\n"})
		}, []string{"read-only to agents"}},
		{"write .git config", func() string { return call(t, write, m{"path": ".git/config", "content": "x"}) }, []string{"read-only to agents"}},
		{"write project prompt", func() string { return call(t, write, m{"path": "prompts/owner.md", "content": "x"}) }, []string{"read-only to agents"}},
		{"new project prompt", func() string { return call(t, write, m{"path": "prompts/zz.md", "content": "junk"}) }, []string{"read-only to agents"}},
		{"read project prompt", func() string { return call(t, read, m{"path": "prompts/owner.md"}) }, []string{"mine"}},
		{"read fifo", func() string { return call(t, read, m{"path": "pipe"}) }, []string{"not a regular file"}},
		{"write fifo", func() string { return call(t, write, m{"path": "pipe", "content": "x"}) }, []string{"not a regular file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { mustContain(t, c.tl(), c.want...) })
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); !os.IsNotExist(err) {
		t.Errorf("a hook was written: %v", err)
	}
}

// create_capability grants only what its creator has, and never a name that
// is an agent's or the human's.
func TestCreateCapabilityLimits(t *testing.T) {
	s := newStore(t)
	greeter := &store.Agent{Name: "greeter", Prompt: "greeter"}
	actor := store.Actor{Name: "greeter", Agent: greeter}
	if _, _, err := capability.Create(s, fsstate.New(s), actor, "shell", "runs things", []string{"run_command", "write_file"}, "I run commands.\n"); err == nil {
		t.Fatal("greeter granted run_command, which it does not have")
	}
	if _, _, err := capability.Create(s, fsstate.New(s), actor, "echo", "thinks", []string{"think"}, "I echo.\n"); err != nil {
		t.Fatalf("granting a universal capability: %v", err)
	}
	if _, _, err := capability.Create(s, fsstate.New(s), store.Human, "human", "impostor", nil, "I am the human.\n"); err == nil {
		t.Fatal("created a prompt object named human")
	}
}
