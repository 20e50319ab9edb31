package msglog

import (
	"fmt"
	"testing"

	"github.com/plasmodium/pm/internal/bus"
)

// A call whose reply never comes (its callee died, the log began after the
// reply) must not be kept for ever: a dashboard or pm talk follows the bus
// for days. The cascade keeps the most recent open calls, so a live call
// still nests its events.
func TestCascadeForgetsTheOldestOpenCalls(t *testing.T) {
	c := NewCascade()
	request := func(corr, cause string) bus.Event {
		return bus.Event{Kind: bus.POKind("request"), Actor: "a", Agent: "b", Text: "a → b: hi",
			Data: bus.POMessage{Corr: corr, Cause: cause}}
	}
	for i := range 10 * maxOpenCalls {
		c.Line(request(fmt.Sprintf("c-%d", i), ""))
		c.Line(bus.Event{Kind: bus.EvRequestAsked, Actor: "a", Text: "?", Data: bus.RequestAsked{Request: fmt.Sprintf("rq-%d", i)}})
	}
	if n := len(c.level); n > maxOpenCalls {
		t.Fatalf("%d open calls kept, want at most %d", n, maxOpenCalls)
	}
	if n := len(c.order); n > 2*maxOpenCalls+64 {
		t.Fatalf("order holds %d ids, want it bounded", n)
	}
	last := fmt.Sprintf("c-%d", 10*maxOpenCalls-1)
	if l, _ := c.Line(request("inner", last)); l.Depth != 1 {
		t.Fatalf("a request under the newest open call has depth %d, want 1", l.Depth)
	}
}
