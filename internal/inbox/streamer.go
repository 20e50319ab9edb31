package inbox

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// maxPiece bounds one piece's text, well under state.MaxEntry with its
// JSON escaping.
const maxPiece = 64 << 10

// Streamer appends a streamed reply's pieces off the model loop's path:
// Add returns at once, and the pieces that come while a write is in
// flight go out together in the next one (one synced write to a hub costs
// milliseconds; a model streams a piece every few). The pieces' texts,
// joined, are what was added, in order; Close returns once all are out.
type Streamer struct {
	st         ReplyAppender
	name, corr string

	mu   sync.Mutex
	buf  strings.Builder
	busy bool
	err  error
	wg   sync.WaitGroup
}

// NewStreamer streams the reply to request corr of agent name.
func NewStreamer(st ReplyAppender, name, corr string) *Streamer {
	return &Streamer{st: st, name: name, corr: corr}
}

// Add queues text and starts a write unless one is in flight.
func (s *Streamer) Add(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.WriteString(text)
	if !s.busy {
		s.busy = true
		s.wg.Add(1)
		go s.drain()
	}
}

// drain writes what is queued until nothing is.
func (s *Streamer) drain() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		text := s.buf.String()
		s.buf.Reset()
		if text == "" {
			s.busy = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for text != "" && s.failed() == nil { // after a failed write the rest is dropped: the reply still goes whole
			piece := cut(text)
			text = text[len(piece):]
			if err := Stream(s.st, s.name, s.corr, piece); err != nil {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
				}
				s.mu.Unlock()
			}
		}
	}
}

// cut is text's first piece: at most maxPiece bytes, ending at a rune
// boundary.
func cut(text string) string {
	if len(text) <= maxPiece {
		return text
	}
	n := maxPiece
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// failed is the first write's error, if any.
func (s *Streamer) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close waits until every piece is out and returns the first write's
// error, if any (a caller that shows the pieces still gets the reply
// whole).
func (s *Streamer) Close() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
