package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
)

// actions registers the human's write operations: each a POST of the ops
// input as JSON, answered with the ops result as JSON.
func (s *Server) actions(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/say", action(s, ops.Say))
	mux.HandleFunc("POST /api/answer", action(s, ops.Answer))
	mux.HandleFunc("POST /api/end-phase", action(s, ops.EndPhase))
	mux.HandleFunc("POST /api/extend-phase", action(s, ops.ExtendPhase))
	mux.HandleFunc("POST /api/kill", action(s, ops.Kill))
	mux.HandleFunc("POST /api/task", action(s, ops.CreateTask))
	mux.HandleFunc("POST /api/stop", action(s, ops.Stop))
	mux.HandleFunc("POST /api/merge", action(s, ops.MergeTask))
	mux.HandleFunc("POST /api/reject", action(s, ops.RejectTask))
}

// action adapts one ops function to HTTP: auth and CSRF, a capped strict
// JSON body, the human's session, errors mapped from their exit codes.
func action[In, Out any](s *Server, op func(context.Context, *ops.Session, In) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if code, msg := s.writeGuard(r); code != 0 {
			writeError(w, code, msg)
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "send the body as application/json")
			return
		}
		var in In
		if code, msg := decodeBody(w, r, s.cfg.MaxBody, &in); code != 0 {
			writeError(w, code, msg)
			return
		}
		out, err := op(r.Context(), s.sess, in)
		if err != nil {
			writeOpError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// decodeBody reads exactly one JSON object of known fields, at most max bytes.
func decodeBody(w http.ResponseWriter, r *http.Request, max int64, v any) (int, string) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, max))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "request body over the limit"
	case err != nil:
		return http.StatusBadRequest, "bad JSON body: " + err.Error()
	}
	return 0, ""
}

// apiError is every error response's body.
type apiError struct {
	Error string `json:"error"`
	Try   string `json:"try,omitempty"`
	Code  int    `json:"exit_code,omitempty"` // the CLI's exit code for the same failure
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// writeOpError maps an operation's exit code to an HTTP status, keeping the
// message and the Try: hint the CLI would print.
func writeOpError(w http.ResponseWriter, err error) {
	code := errs.CodeOf(err)
	status := http.StatusInternalServerError
	switch code {
	case errs.Usage:
		status = http.StatusBadRequest
	case errs.NotFound:
		status = http.StatusNotFound
	case errs.State, errs.Limit:
		status = http.StatusConflict
	case errs.Timeout:
		status = http.StatusGatewayTimeout
	}
	writeJSON(w, status, apiError{Error: err.Error(), Try: errs.TryOf(err), Code: int(code)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
