package state

import (
	"errors"
	"fmt"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// Sentinel errors: every implementation returns errors that errors.Is
// matches against these (wrapped in an *errs.Error that carries pm's exit
// code and a Try line for the user).
var (
	// ErrNotFound: no such task, phase, agent, request or design (exit 4).
	ErrNotFound = errors.New("state: not found")
	// ErrInvalid: the id or name is malformed (exit 2).
	ErrInvalid = errors.New("state: invalid id")
	// ErrClosed: a RoomTx.Append on a closed phase (exit 5).
	ErrClosed = errors.New("state: room closed")
	// ErrRoomFull: a RoomTx.Append on a room holding MessageLimit
	// messages (exit 5).
	ErrRoomFull = errors.New("state: room full")
	// ErrConflict: a write lost a race it cannot retry by itself, such as
	// a compare-and-set that kept failing (exit 1).
	ErrConflict = errors.New("state: conflict")
	// ErrUnchanged, returned by an update function, writes nothing; the
	// update returns the record as it was and no error.
	ErrUnchanged = lockedfile.ErrUnchanged
)

// codes are the exit codes of the sentinels, for Mark.
var codes = map[error]errs.Code{
	ErrNotFound: errs.NotFound,
	ErrInvalid:  errs.Usage,
	ErrClosed:   errs.State,
	ErrRoomFull: errs.State,
	ErrConflict: errs.Failure,
	// A host's write refused because another host took its agent's lease.
	ErrLeaseLost: errs.State,
}

// marked is an error that is also one of the sentinels.
type marked struct {
	sentinel error
	err      error
}

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.sentinel} }

// Mark makes err match sentinel (errors.Is) and keep what it says. A nil
// err is nil; an err that already matches is returned as it is.
func Mark(err, sentinel error) error {
	if err == nil || errors.Is(err, sentinel) {
		return err
	}
	return &marked{sentinel: sentinel, err: err}
}

// Errorf is a new error matching sentinel, with sentinel's exit code and
// try as its Try line.
func Errorf(sentinel error, try, format string, args ...any) error {
	e := &errs.Error{Code: codes[sentinel], Msg: fmt.Sprintf(format, args...), Try: try}
	return Mark(e, sentinel)
}

// CheckName refuses a malformed agent name (ErrInvalid): names become
// keys, paths and subjects in the implementations.
func CheckName(name string) error {
	if !ids.ValidAgentName(name) {
		return Errorf(ErrInvalid, "agent names look like cedar_a1b2; see 'pm agents'", "%q is not a valid agent name", name)
	}
	return nil
}

// CheckID refuses an id that is not of kind (ids.Task, ids.Phase, …) with
// ErrInvalid.
func CheckID(kind, id string) error {
	if err := ids.Parse(kind, id); err != nil {
		return Errorf(ErrInvalid, "ids look like "+kind+"-a1b2c3", "%v", err)
	}
	return nil
}
