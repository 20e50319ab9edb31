package bus

import (
	"time"

	"github.com/plasmodium/pm/internal/secret"
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

// stamp fills what a publisher may leave out (the time, the human as actor)
// and masks secrets in the text and data (internal/secret is the policy):
// every implementation publishes the same line.
func stamp(ev Event, now func() time.Time, secrets secret.Set) Event {
	if ev.Time.IsZero() {
		if now == nil {
			now = time.Now
		}
		ev.Time = now().UTC()
	}
	if ev.Actor == "" {
		ev.Actor = "human"
	}
	ev.Text, ev.Data = secrets.Mask(ev.Text), secrets.MaskData(ev.Data)
	return ev
}
