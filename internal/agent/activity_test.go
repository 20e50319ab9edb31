package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/plasmodium/pm/internal/broker"
)

func TestWaitingCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"say", "--wait"}, false},
		{[]string{"chat"}, false},
		{[]string{"chat", "--wait"}, true},
		{[]string{"chat", "--phase", "ph-1", "--follow"}, true},
		{[]string{"chat", "-f"}, true},
		{[]string{"chat", "--wait=true"}, true},
		{[]string{"wait", "tk-1"}, true},
		{[]string{"wait-children"}, true},
		{[]string{"call", "reader", "hi"}, true},
		{[]string{"status"}, false},
	} {
		if got := waitingCommand(tc.args); got != tc.want {
			t.Errorf("waitingCommand(%q) = %v; want %v", tc.args, got, tc.want)
		}
	}
}

// Around a waiting command the activity is waiting, then working again;
// nothing is recorded once the run has ended.
func TestExecActivity(t *testing.T) {
	var got []string
	e := &execActivity{set: func(w string) { got = append(got, w) }}
	noop := func(context.Context, []string, broker.Stdio) int { return 0 }
	run := e.wrap(noop)
	e.start()
	run(context.Background(), []string{"status"}, broker.Stdio{})
	run(context.Background(), []string{"chat", "--wait"}, broker.Stdio{})
	e.end()
	run(context.Background(), []string{"wait", "tk-1"}, broker.Stdio{})
	want := []string{ActivityWorking, ActivityWaiting, ActivityWorking, ActivityIdle}
	if !slices.Equal(got, want) {
		t.Fatalf("activities %q; want %q", got, want)
	}
}
