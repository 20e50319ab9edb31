package dashboard

import (
	"net/http"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
)

// detailLog is how much of each agent's log's end a task's detail carries
// (bytes): exec agents' output is there.
const detailLog = 16 << 10

// detailPatch and detailDiff bound the diff a task's detail carries (bytes
// of patch text per file and in all): an agent can write a file of any size,
// the page shows the rest as cut and pm diff has all of it.
const (
	detailPatch = 64 << 10
	detailDiff  = 512 << 10
)

// detailTail is how many of each phase's last messages a task's detail
// carries (closed phases included).
const detailTail = 200

// TaskDetail is GET /api/task?id=tk-…: one task as pm status tk-… shows it
// (its phases, agents with usage, health and pending requests, its commit),
// every phase with its last messages, and the budgets usage is drawn
// against.
type TaskDetail struct {
	*ops.TaskStatus
	Rooms   []ops.Room     `json:"rooms"`
	Budgets config.Budgets `json:"budgets"`
	// Logs are the end of each of its agents' logs (ops.AgentLog), finished
	// agents included: an exec agent's output is nowhere else.
	Logs []ops.AgentLogResult `json:"logs"`
	// Diff is what the task's branch changed (pm diff), each patch cut to
	// detailPatch and all to detailDiff; nil for a task without a branch of
	// its own, and for a working task unless asked (?diff=1). DiffError
	// says why it could not be read.
	Diff      *ops.DiffResult `json:"diff,omitempty"`
	DiffError string          `json:"diff_error,omitempty"`
}

func (s *Server) taskDetail(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		writeError(w, http.StatusBadRequest, "say which task: /api/task?id=tk-…")
		return
	}
	st, err := ops.Status(r.Context(), s.sess, ops.StatusInput{Task: id})
	if err != nil {
		writeOpError(w, err)
		return
	}
	rooms, err := ops.Rooms(r.Context(), s.sess, ops.RoomsInput{Task: id, Tail: detailTail})
	if err != nil {
		writeOpError(w, err)
		return
	}
	logs := []ops.AgentLogResult{}
	for _, a := range st.View.Agents {
		l, err := ops.AgentLog(r.Context(), s.sess, ops.AgentLogInput{Agent: a.Name, Tail: detailLog})
		if err != nil {
			writeOpError(w, err)
			return
		}
		logs = append(logs, l)
	}
	d := TaskDetail{TaskStatus: st.View, Rooms: rooms, Budgets: s.sess.Store.Config().Budgets, Logs: logs}
	// A working task's diff walks its worktree (what pm done would commit
	// now): only on request (?diff=1), not on every re-read of a live view,
	// unless its merge waits (the human decides on it).
	t := st.View.Task
	if t.Worktree != nil && (!t.Live() || t.Merge != nil || r.URL.Query().Get("diff") == "1") {
		diff, err := ops.TaskDiff(r.Context(), s.sess, ops.DiffInput{Task: t.ID})
		if err != nil {
			d.DiffError = err.Error()
		} else {
			boundDiff(&diff)
			d.Diff = &diff
		}
	}
	writeJSON(w, http.StatusOK, d)
}

// boundDiff cuts the patches to detailPatch each and detailDiff in all,
// marking each cut file.
func boundDiff(d *ops.DiffResult) {
	left := detailDiff
	for i := range d.Files {
		f := &d.Files[i]
		n := min(len(f.Patch), detailPatch, left)
		if n < len(f.Patch) {
			f.Patch, f.Cut = f.Patch[:n], true
		}
		left -= n
	}
}
