package dashboard

import (
	"net/http"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
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
	writeJSON(w, http.StatusOK, TaskDetail{TaskStatus: st.View, Rooms: rooms, Budgets: s.sess.Store.Config().Budgets})
}
