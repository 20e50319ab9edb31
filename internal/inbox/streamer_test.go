package inbox

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// gatedReplies is a reply stream whose first append blocks until released
// (a synced write to a hub in flight), recording every append.
type gatedReplies struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	got     []Delta
}

func (g *gatedReplies) AppendReply(_ string, v any) error {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got = append(g.got, v.(Delta))
	return nil
}

// The model's pieces never wait on the store: those that come while a
// write is in flight go out together in the next one, in order, and Close
// returns once every piece is out. (Each piece was one synced write on a
// hub: ~8 ms per model chunk on the model loop's path.)
func TestStreamerCoalescesWhileAWriteIsInFlight(t *testing.T) {
	g := &gatedReplies{entered: make(chan struct{}), release: make(chan struct{})}
	s := NewStreamer(g, "res", "c1")
	s.Add("Hel")
	<-g.entered // the first write is in flight
	pieces := []string{"lo", ", ", "wor", "ld", "!"}
	for _, p := range pieces {
		s.Add(p) // returns at once: the first write still blocks
	}
	close(g.release)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, d := range g.got {
		if d.Corr != "c1" {
			t.Fatalf("piece for %q", d.Corr)
		}
		text = append(text, d.Text)
	}
	if len(g.got) != 2 || strings.Join(text, "") != "Hello, world!" {
		t.Fatalf("appends %q, want 2 making \"Hello, world!\"", text)
	}
}

// A piece larger than a stream entry may hold is split, at rune
// boundaries, into pieces that fit.
func TestStreamerSplitsLargePieces(t *testing.T) {
	g := &gatedReplies{entered: make(chan struct{}), release: make(chan struct{})}
	close(g.release)
	s := NewStreamer(g, "res", "c1")
	big := strings.Repeat("é", maxPiece) // 2 bytes each: twice maxPiece
	s.Add(big)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var joined strings.Builder
	for _, d := range g.got {
		if len(d.Text) > maxPiece || !strings.HasPrefix(d.Text, "é") {
			t.Fatalf("a piece of %d bytes starting %q", len(d.Text), d.Text[:2])
		}
		joined.WriteString(d.Text)
	}
	if joined.String() != big {
		t.Fatal("the pieces do not make the text")
	}
}

type failingReplies struct{ calls int }

func (f *failingReplies) AppendReply(string, any) error {
	f.calls++
	return errors.New("the hub does not answer")
}

// After a write fails (a hub that does not answer: each try waits out its
// timeout) the rest is dropped, so the reply is not held up behind it.
func TestStreamerDropsTheRestAfterAFailure(t *testing.T) {
	f := &failingReplies{}
	s := NewStreamer(f, "res", "c1")
	s.Add(strings.Repeat("x", 3*maxPiece)) // three pieces
	if err := s.Close(); err == nil {
		t.Fatal("Close reported no error")
	}
	if f.calls != 1 {
		t.Fatalf("%d writes after the first failed, want none", f.calls-1)
	}
}
