package ids

import (
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Kinds of ids. Each is a prefix, a dash and six lowercase hex digits.
const (
	Task    = "tk"
	Phase   = "ph"
	Message = "msg"
	Request = "rq"
	Design  = "ds"
)

// Source makes ids; tests inject a deterministic reader.
type Source struct{ Rand io.Reader }

// Default draws from the runtime's ChaCha8 generator (math/rand/v2's
// top-level functions), which the kernel seeds at every process start. Ids
// are names, not secrets (identity is the broker's token or the agent's own
// PM_AGENT, see docs/security.md): what they need is to be unpredictable
// enough not to collide, which this is. crypto/rand would cost every short
// command a timer, the poller's set-up and the FIPS module's package
// initialisation (docs/benchmarks.md, "The rest of a say").
var Default = Source{Rand: runtimeRand{}}

// runtimeRand reads from math/rand/v2's top-level generator.
type runtimeRand struct{}

func (runtimeRand) Read(b []byte) (int, error) {
	for i := 0; i < len(b); i += 8 {
		v := rand.Uint64()
		for j := i; j < len(b) && j < i+8; j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
	return len(b), nil
}

func (s Source) hex(n int) string {
	r := s.Rand
	if r == nil {
		r = runtimeRand{}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		panic(fmt.Sprintf("ids: random source failed: %v", err))
	}
	return hex.EncodeToString(b)
}

// New returns a fresh id of the given kind, e.g. "tk-a1b2c3".
func (s Source) New(kind string) string { return kind + "-" + s.hex(3) }

var trees = []string{
	"cedar", "oak", "pine", "birch", "ash", "willow", "maple", "elm", "aspen", "alder",
	"beech", "cypress", "fir", "hazel", "juniper", "larch", "linden", "poplar", "rowan", "spruce",
	"yew", "acacia", "hemlock", "sequoia", "magnolia", "olive", "palm", "sycamore", "walnut", "holly",
}

// AgentName returns a fresh agent name like "cedar_a1b2".
func (s Source) AgentName() string {
	b := s.hex(3)
	var first int
	fmt.Sscanf(b[:2], "%02x", &first)
	return trees[first%len(trees)] + "_" + b[2:6]
}

// Parse checks that id is a well-formed id of the given kind.
func Parse(kind, id string) error {
	rest, ok := strings.CutPrefix(id, kind+"-")
	if !ok || len(rest) != 6 || !isLowerHex(rest) {
		return fmt.Errorf("%q is not a %s id (want %s-xxxxxx, six hex digits)", id, kind, kind)
	}
	return nil
}

// ValidAgentName reports whether name is safe to use as a directory name:
// 1 to 64 of [a-z0-9_-], starting with a letter or digit.
func ValidAgentName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
