package bus

import (
	"strings"
	"time"
)

// Event is one line of events.jsonl.
type Event struct {
	Time    time.Time      `json:"ts"`
	Kind    Kind           `json:"kind"`
	Actor   string         `json:"actor"`
	TaskID  string         `json:"task_id,omitempty"`
	PhaseID string         `json:"phase_id,omitempty"`
	MsgID   string         `json:"msg_id,omitempty"`
	Agent   string         `json:"agent,omitempty"`
	Text    string         `json:"text,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
}

// minSecret: shorter "secrets" are not masked, or every short word of a
// text could turn into [masked].
const minSecret = 8

// stamp fills what a publisher may leave out (the time, the human as actor)
// and masks secrets in the text: every implementation publishes the same line.
func stamp(ev Event, now func() time.Time, secrets []string) Event {
	if ev.Time.IsZero() {
		if now == nil {
			now = time.Now
		}
		ev.Time = now().UTC()
	}
	if ev.Actor == "" {
		ev.Actor = "human"
	}
	for _, sec := range secrets {
		if len(sec) >= minSecret {
			ev.Text = strings.ReplaceAll(ev.Text, sec, "[masked]")
		}
	}
	return ev
}
