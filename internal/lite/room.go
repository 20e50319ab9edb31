package lite

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Say is pm say's body (the cobra command's too), on s and its records st:
// phase.Post, then the
// message's id (or, with asJSON, the message as one JSON line) and, when it
// closed the phase, a line saying so.
func Say(out io.Writer, s *store.Store, st state.State, actor store.Actor, fence state.AgentLease, phaseID, message string, asJSON bool) error {
	ph, msg, closed, err := phase.Post(s, st, actor, fence, phaseID, message)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(out).Encode(msg)
	}
	io.WriteString(out, msg.ID+"\n")
	if closed {
		fmt.Fprintf(out, "phase %s reached its limit and is now closed\n", ph.ID)
	}
	return nil
}

// Chat is pm chat's body without --follow or --wait (the cobra command's
// too): the room is printed as it is read (phase.ReadViews: each line
// decoded in place into one reused view, printed at once, nothing held or
// allocated per line, constant memory), then a line about the phase on
// errOut. With asJSON the lines go out as written, checked to be JSON and
// not decoded.
func Chat(out, errOut io.Writer, s *store.Store, st state.State, actor store.Actor, phaseID string, asJSON bool) error {
	w := bufio.NewWriterSize(out, 64<<10)
	var v *store.MessageView
	var p render.Printer
	each := func(raw []byte) error {
		w.Write(raw)
		return w.WriteByte('\n')
	}
	if !asJSON {
		v = new(store.MessageView)
		each = func([]byte) error {
			if v.ID == "" {
				return nil // valid JSON that is no message (a hand-edited line): not shown
			}
			p.Print(w, v)
			return nil
		}
	}
	ph, n, err := phase.ReadViews(s, st, actor, phaseID, v, each)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if !asJSON {
		io.WriteString(errOut, "-- "+render.PhaseLine(ph, n)+"\n")
	}
	return nil
}
