package loopguard

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// Guard counts one agent's identical calls in a row.
type Guard struct {
	Limit int // the call that would be the Limit-th in a row is a hit

	mu     sync.Mutex
	sig    string
	result [sha256.Size]byte
	n      int
}

// Hit is a repetition found before a call: the call, its arguments and how
// many times in a row it already ran with the same result.
type Hit struct {
	Name  string
	Args  string
	Times int
}

// Sig is the identity of a call: its name and its arguments, compacted when
// they are JSON.
func Sig(name, args string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) == nil {
		args = b.String()
	}
	return name + "\x00" + args
}

// Check reports whether the call (name, args) would be the Limit-th in a
// row of the same call with the same result.
func (g *Guard) Check(name, args string) (Hit, bool) {
	if g == nil || g.Limit < 2 {
		return Hit{}, false
	}
	sig := Sig(name, args)
	g.mu.Lock()
	defer g.mu.Unlock()
	if sig != g.sig || g.n < g.Limit-1 {
		return Hit{}, false
	}
	return Hit{Name: name, Args: args, Times: g.n}, true
}

// Record counts a call that ran with its result.
func (g *Guard) Record(name, args, result string) {
	if g == nil {
		return
	}
	sig, sum := Sig(name, args), sha256.Sum256([]byte(result))
	g.mu.Lock()
	defer g.mu.Unlock()
	if sig == g.sig && sum == g.result {
		g.n++
		return
	}
	g.sig, g.result, g.n = sig, sum, 1
}

// Reset forgets the count (the human let the agent go on).
func (g *Guard) Reset() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.sig, g.n = "", 0
	g.mu.Unlock()
}
