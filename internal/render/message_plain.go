package render

import (
	"io"
	"strings"

	"github.com/plasmodium/pm/internal/store"
)

// twoDigits holds "00" to "59": a clock field is twoDigits[2*n : 2*n+2].
const twoDigits = "000102030405060708091011121314151617181920212223242526272829" +
	"303132333435363738394041424344454647484950515253545556575859"

// appendWriter is a writer that lends its free buffer (bufio.Writer,
// bytes.Buffer): a line appended there is written without a copy.
type appendWriter interface {
	AvailableBuffer() []byte
	io.Writer
}

// printPlain is PrintMessage for the usual message, whose author, role and
// content need no escaping (isPlain), written to a writer that lends its
// buffer (pm chat's bufio.Writer): the same bytes as PrintMessage's general
// path in one Write, without fmt, time formatting or copies, which were
// most of a message's cost in a long room. It reports false, having
// written nothing, for any other message or writer.
func printPlain(w io.Writer, m *store.Message) bool {
	aw, ok := w.(appendWriter)
	if !ok || !isPlain(m.Author, true) || !isPlain(m.Role, true) || !isPlain(m.Content, false) {
		return false
	}
	h, mi, s := m.Timestamp.Local().Clock() // as Format("15:04:05")
	aw.Write(appendPlain(aw.AvailableBuffer(), m, h, mi, s))
	return true
}

// appendPlain appends a plain message (printPlain), its local clock h:mi:s.
func appendPlain(b []byte, m *store.Message, h, mi, s int) []byte {
	b = append(b, '[')
	b = append(b, twoDigits[2*h:2*h+2]...)
	b = append(b, ':')
	b = append(b, twoDigits[2*mi:2*mi+2]...)
	b = append(b, ':')
	b = append(b, twoDigits[2*s:2*s+2]...)
	if m.Author == "human" {
		b = append(b, "] human"...)
	} else {
		b = append(append(b, "] @"...), m.Author...)
	}
	if m.Role != "" {
		b = append(append(append(b, " ("...), m.Role...), ')')
	}
	b = append(b, ": "...)
	// Continuation lines are indented under the first.
	body := m.Content
	for {
		i := strings.IndexByte(body, '\n')
		if i < 0 {
			break
		}
		b = append(append(b, body[:i+1]...), "    "...)
		body = body[i+1:]
	}
	return append(append(b, body...), '\n')
}
