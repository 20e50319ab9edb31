package secret

import (
	"io"
	"sync"
)

// Writer masks what is written through it before passing it on to the
// underlying writer, holding back a possible start of a secret until the
// next write (or Flush) settles it. It is safe for concurrent use; writes
// from several goroutines are masked as one stream, in the order they land.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	set  Set
	held string
}

// Writer returns a masking writer onto w.
func (s Set) Writer(w io.Writer) *Writer { return &Writer{w: w, set: s} }

// Write masks p and writes what is settled. It reports len(p) written unless
// the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set.Empty() {
		return w.w.Write(p)
	}
	out, held := w.set.MaskStream(w.held + string(p))
	w.held = held
	if out == "" {
		return len(p), nil
	}
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back: at the end of the stream it cannot be the
// start of a secret any more.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == "" {
		return nil
	}
	_, err := io.WriteString(w.w, w.set.Mask(w.held))
	w.held = ""
	return err
}
