package capability_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/plasmodium/pm/internal/state"
)

// markingLease is a host's lease that records the fence marks it takes
// and refuses them with refuse (nil: takes them).
type markingLease struct {
	marks  []string
	refuse error
}

func (l *markingLease) Renew(context.Context) error   { return nil }
func (l *markingLease) Release(context.Context) error { return nil }
func (l *markingLease) OnRefused(func(error))         {}
func (l *markingLease) Fence(_ context.Context, mark string) error {
	if l.refuse != nil {
		return l.refuse
	}
	l.marks = append(l.marks, mark)
	return nil
}

// An llm agent's tool call is fenced as an exec agent's pm command is by
// its host's guard: the hub takes the call's mark on the host's lease
// before the call runs, and a refused mark (another host took the lease)
// refuses the call, which then does nothing. Before, only an llm agent's
// say carried the lease; its other calls ran on a host the hub had
// fenced, until the host's clock said so.
func TestToolCallsAreFenced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse error
		want   string
	}{
		{name: "held", want: "wrote 2 bytes to notes.md"},
		{name: "taken by another host", refuse: state.Mark(errors.New("fenced: host-a's write"), state.ErrLeaseLost),
			want: "another host holds the agent's lease"},
		{name: "hub unanswered", refuse: errors.New("nats: timeout"), want: "did not take the call's fence mark"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, ws, _ := workspace(t)
			le := &markingLease{refuse: tc.refuse}
			env.Fence = le
			write := tool(t, env, obj("write_file"), "write_file")
			mustContain(t, call(t, write, m{"path": "notes.md", "content": "hi"}), tc.want)
			_, err := os.Stat(filepath.Join(ws, "notes.md"))
			switch {
			case tc.refuse == nil && (err != nil || !slices.Equal(le.marks, []string{"tool write_file"})):
				t.Fatalf("the held call: %v, marks %q; want the file written after one mark", err, le.marks)
			case tc.refuse != nil && err == nil:
				t.Fatal("a call whose fence mark was refused wrote its file")
			}
		})
	}
}
