package render

import (
	"io"
	"strings"

	"github.com/plasmodium/pm/internal/store"
)

// twoDigits holds "00" to "59": a clock field is twoDigits[2*n : 2*n+2].
const twoDigits = "000102030405060708091011121314151617181920212223242526272829" +
	"303132333435363738394041424344454647484950515253545556575859"

// printPlain is PrintMessage for the usual message, whose author, role and
// content need no escaping (isPlain), written to a writer that takes
// strings (pm chat's bufio.Writer): the same bytes as PrintMessage's
// general path, without fmt, time formatting or copies, which were most of
// a message's cost in a long room. It reports false, having written
// nothing, for any other message or writer.
func printPlain(w io.Writer, m *store.Message) bool {
	sw, ok := w.(io.StringWriter)
	if !ok || !isPlain(m.Author, true) || !isPlain(m.Role, true) || !isPlain(m.Content, false) {
		return false
	}
	h, mi, s := m.Timestamp.Local().Clock() // as Format("15:04:05")
	sw.WriteString("[")
	sw.WriteString(twoDigits[2*h : 2*h+2])
	sw.WriteString(":")
	sw.WriteString(twoDigits[2*mi : 2*mi+2])
	sw.WriteString(":")
	sw.WriteString(twoDigits[2*s : 2*s+2])
	if m.Author == "human" {
		sw.WriteString("] human")
	} else {
		sw.WriteString("] @")
		sw.WriteString(m.Author)
	}
	if m.Role != "" {
		sw.WriteString(" (")
		sw.WriteString(m.Role)
		sw.WriteString(")")
	}
	sw.WriteString(": ")
	// Continuation lines are indented under the first.
	body := m.Content
	for {
		i := strings.IndexByte(body, '\n')
		if i < 0 {
			break
		}
		sw.WriteString(body[:i+1])
		sw.WriteString("    ")
		body = body[i+1:]
	}
	sw.WriteString(body)
	sw.WriteString("\n")
	return true
}
