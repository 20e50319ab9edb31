package dashboard

import (
	"encoding/json"
	"net/http"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/msglog"
	"github.com/plasmodium/pm/internal/state"
)

// Timeline is GET /api/timeline?task=tk-…&before=C: the last events of one
// task before a cursor (the page's snapshot cursor), as the snapshot's log
// gives them. The page's timeline filter shows them with the live events of
// that task it followed since C: together, the task's recent history, each
// event once.
type Timeline struct {
	Task string     `json:"task"`
	Log  []LogEntry `json:"log"`
	// Complete: the scan reached the bus's start (no older event of the
	// task exists); else only the last timelineScan events were read.
	Complete bool `json:"complete"`
}

// timelineScan bounds how many events before the cursor one timeline read
// goes through (a task's events may be far apart on a busy bus).
const timelineScan = 20_000

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, err := intParam(q.Get("n"), defaultLog, maxLog)
	if err != nil {
		writeError(w, http.StatusBadRequest, "n is a count")
		return
	}
	before, err := bus.ParseCursor(q.Get("before"))
	if err != nil || q.Get("before") == "" {
		writeError(w, http.StatusBadRequest, "before is the cursor of a snapshot (GET /api/state's cursor)")
		return
	}
	id, err := state.CompleteID(s.sess.State, ids.Task, q.Get("task")) // a unique prefix names its task
	if err == nil && ids.Parse(ids.Task, id) != nil {
		writeError(w, http.StatusBadRequest, "say which task: /api/timeline?task=tk-…&before=CURSOR")
		return
	}
	if err == nil {
		_, err = s.sess.State.Task(id)
	}
	if err != nil {
		writeOpError(w, err)
		return
	}
	seen, err := s.sess.Store.Bus().Before(before, timelineScan)
	if err != nil {
		writeOpError(w, err)
		return
	}
	out := Timeline{Task: id, Log: []LogEntry{}, Complete: len(seen) < timelineScan}
	lines := msglog.NewCascade() // every scanned event feeds it: depths as the full log has them
	for _, d := range seen {
		line := lineOf(lines, d.Event)
		if d.Event.TaskID == id {
			out.Log = append(out.Log, LogEntry{Event: json.RawMessage(d.Raw), Line: line})
		}
	}
	if len(out.Log) > n {
		out.Log = out.Log[len(out.Log)-n:]
	}
	writeJSON(w, http.StatusOK, out)
}
