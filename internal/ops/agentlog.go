package ops

import (
	"context"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
)

// MaxLogTail bounds how much of an agent's log one read returns (bytes).
const MaxLogTail = 64 << 10

// AgentLogInput names an agent and how much of its log's end to read.
type AgentLogInput struct {
	Agent string `json:"agent" jsonschema:"agent name, as pm agents prints it"`
	Tail  int    `json:"tail,omitempty" jsonschema:"bytes from the end (default and most 65536)"`
}

// AgentLogResult is the end of an agent's log (logs/NAME.log: its host's
// lines and an exec agent's output, masked when written).
type AgentLogResult struct {
	Agent string `json:"agent"`
	Text  string `json:"text"`
	// Cut: the log is longer than Text; its start was left out.
	Cut bool `json:"cut,omitempty"`
}

// AgentLog reads the end of an agent's log, bounded by MaxLogTail, starting
// at a line start when it cuts. An agent that never wrote a log has none.
func AgentLog(ctx context.Context, sess *Session, in AgentLogInput) (AgentLogResult, error) {
	name := strings.TrimPrefix(in.Agent, "@")
	if !ids.ValidAgentName(name) {
		return AgentLogResult{}, errs.Usagef("see pm agents --all", "%q is not an agent name", in.Agent)
	}
	if _, err := sess.State.Agent(name); err != nil {
		return AgentLogResult{}, err
	}
	tail := in.Tail
	if tail <= 0 || tail > MaxLogTail {
		tail = MaxLogTail
	}
	out := AgentLogResult{Agent: name}
	f, err := os.Open(sess.Store.LogPath(name))
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return out, err
	}
	start := max(fi.Size()-int64(tail), 0)
	b := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
		return out, err
	}
	if start > 0 {
		out.Cut = true
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:] // from the first whole line
		}
	}
	out.Text = strings.ToValidUTF8(string(b), string(utf8.RuneError))
	return out, nil
}
