package bus

import (
	"context"
	"errors"
	"sync"
)

// memLog is a Log in memory with a hub stream's numbering: 1, 2, 3…,
// never reused, a purge keeps counting. The bus contract runs on Seq over
// it (impls); natsbus runs it on the hub's stream.
type memLog struct {
	mu      sync.Mutex
	first   uint64 // number of lines[0]
	lines   [][]byte
	ids     map[string]uint64
	changed chan struct{}
}

func newMemLog() *memLog {
	return &memLog{first: 1, ids: map[string]uint64{}, changed: make(chan struct{})}
}

func (l *memLog) Append(_ context.Context, id string, line []byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := l.ids[id]; ok {
		return n, nil
	}
	l.lines = append(l.lines, line)
	n := l.first + uint64(len(l.lines)) - 1
	l.ids[id] = n
	close(l.changed)
	l.changed = make(chan struct{})
	return n, nil
}

func (l *memLog) Bounds(context.Context) (uint64, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := l.first + uint64(len(l.lines)) - 1
	if last == 0 {
		return 0, 0, nil
	}
	return l.first, last, nil
}

// from is the lines numbered above after, and the channel closed on the next append.
func (l *memLog) from(after uint64) (uint64, [][]byte, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(after+1, l.first)
	i := int(start - l.first)
	if i > len(l.lines) {
		i = len(l.lines)
	}
	return start, append([][]byte(nil), l.lines[i:]...), l.changed
}

func (l *memLog) Range(_ context.Context, lo, hi uint64, fn func(uint64, []byte) error) error {
	start, lines, _ := l.from(lo - 1)
	for i, line := range lines {
		if start+uint64(i) > hi {
			break
		}
		if err := fn(start+uint64(i), line); err != nil {
			return err
		}
	}
	return nil
}

func (l *memLog) Follow(ctx context.Context, after uint64, fn func(uint64, []byte) error) error {
	for {
		start, lines, changed := l.from(after)
		for i, line := range lines {
			after = start + uint64(i)
			if err := fn(after, line); errors.Is(err, ErrStopFollow) {
				return nil
			} else if err != nil {
				return err
			}
		}
		if len(lines) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (l *memLog) Purge(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.first += uint64(len(l.lines))
	l.lines = nil
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}
