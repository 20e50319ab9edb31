package render

import (
	"fmt"
	"strings"
)

// HeadTail keeps the first and the last half of Max bytes written to it:
// a command's output, bounded (run_command, the code designer's test tool).
type HeadTail struct {
	Max   int
	head  []byte
	tail  []byte
	total int64
}

func (w *HeadTail) Write(p []byte) (int, error) {
	n0 := len(p)
	w.total += int64(n0)
	half := w.Max / 2
	if room := half - len(w.head); room > 0 {
		n := min(room, len(p))
		w.head = append(w.head, p[:n]...)
		p = p[n:]
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*half {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-half:]...)
	}
	return n0, nil
}

func (w *HeadTail) String() string {
	half := w.Max / 2
	tail := w.tail
	if len(tail) > half {
		tail = tail[len(tail)-half:]
	}
	kept := int64(len(w.head) + len(tail))
	if kept == w.total {
		return strings.ToValidUTF8(string(w.head)+string(tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(w.head), "\uFFFD") +
		fmt.Sprintf("\n[cut: %d bytes of output not shown]\n", w.total-kept) +
		strings.ToValidUTF8(string(tail), "\uFFFD")
}
