package llmagent

import (
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/store"
)

// Streamed model text goes on the bus in pieces (agent.output), so the
// dashboard's rooms show it as it is generated. A model streams tokens of a
// few bytes: one bus line each would swell events.jsonl and wake every
// follower per token, so pieces are held until they reach outputChunk
// bytes, end a line, or outputEvery has passed since the last piece; the
// rest goes at the end of the response (agent.turn follows it).
const (
	outputChunk = 256
	outputEvery = 100 * time.Millisecond
)

// output gathers one agent's streamed text into bus events. Its methods are
// called from the loop's callbacks, which never run concurrently.
type output struct {
	publish func(text string, data bus.Payload)
	now     func() time.Time
	buf     strings.Builder
	last    time.Time
	sent    bool // a piece of this response is on the bus already
}

func newOutput(s *store.Store, a *store.Agent) *output {
	return &output{now: time.Now, publish: func(text string, data bus.Payload) {
		s.Notify(agentEvent(a, bus.EvAgentOutput, text, data))
	}}
}

// delta takes one piece of streamed text.
func (o *output) delta(text string) {
	if o.buf.Len() == 0 && o.last.IsZero() {
		o.last = o.now() // the first piece of a response waits its interval too
	}
	o.buf.WriteString(text)
	if o.buf.Len() >= outputChunk || strings.Contains(text, "\n") || o.now().Sub(o.last) >= outputEvery {
		o.flush()
	}
}

// flush publishes what is held.
func (o *output) flush() {
	if o.buf.Len() == 0 {
		return
	}
	o.publish(o.buf.String(), nil)
	o.buf.Reset()
	o.last, o.sent = o.now(), true
}

// end closes a response: the held text goes out, and the next response
// starts afresh.
func (o *output) end() {
	o.flush()
	o.last, o.sent = time.Time{}, false
}

// retry drops the text of a failed attempt: what is held is discarded, and
// readers are told to drop what they were shown of it.
func (o *output) retry() {
	if o.sent {
		o.publish("", bus.AgentOutput{Retry: true})
	}
	o.buf.Reset()
	o.last, o.sent = time.Time{}, false
}

// turnEvent is agent.turn: a model response ended, with the agent's usage.
func turnEvent(a *store.Agent, used llm.Counters, e cost.Entry) bus.Event {
	// usd is this call's dollars, null when unknown (never 0 for unknown).
	return agentEvent(a, bus.EvAgentTurn, "", bus.AgentTurn{Turns: used.Turns, ToolCalls: used.ToolCalls, Tokens: used.Tokens, USD: e.USD})
}

// agentEvent is an event of the agent a itself: it is the actor, and the
// event carries its task and phase, so followers of either see it.
func agentEvent(a *store.Agent, kind bus.Kind, text string, data bus.Payload) bus.Event {
	return bus.Event{Kind: kind, Actor: a.Name, Agent: a.Name, TaskID: a.TaskID, PhaseID: a.PhaseID, Text: text, Data: data}
}
