package supervisor

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/plasmodium/pm/internal/watch"
)

// An agent record the supervisor cannot read is no reason to leave: it
// may be the one live agent. The supervisor stays, keeps the marker, and
// reports the record in supervisor.json (pm status shows it).
func TestUnreadableRecordIsReportedNotLeft(t *testing.T) {
	r := newRig(t, DefaultPolicy)
	_, owner := r.startOwner(t)
	if err := os.WriteFile(r.s.AgentPath(owner.Name), []byte(`{"name": "`+owner.Name+`", "status": "runn`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.sv.Run(ctx) }()
	reported := func() (bool, error) {
		select {
		case err := <-ran:
			t.Fatalf("Run returned (%v) with an unreadable record", err)
		default:
		}
		in := r.s.SupervisorInfo()
		return in != nil && slices.Contains(in.Unreadable, owner.Name), nil
	}
	if err := watch.Until(ctx, func() []string { return []string{r.s.Root} }, reported); err != nil {
		t.Fatalf("the unreadable record was not reported: %v", err)
	}
	if !r.s.SupervisorWanted() || !r.s.SupervisorLive() {
		t.Fatal("the supervisor left, or dropped its marker")
	}
	cancel()
	<-ran
}
