package natsstate

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
)

// Agent logs (state.AgentLogs) on three streams of the project, a subject
// per agent (natsx.Names): PM_TRANSCRIPT_P, PM_REPLY_P and PM_COSTS_P (one
// subject). A position is the stream sequence after an entry, as a
// mailbox's. Their bounds (docs/distributed.md): an entry is at most
// state.MaxEntry bytes on all three (the stream refuses a longer one), a
// transcript's or reply's cut to EntryLimit before it is sent; a
// transcript and a reply stream are kept to their totals (Bounds,
// logbound.go: the oldest whole turns purged); a reply stream's pieces are
// kept 24 hours at most (the longest a call waits: llmagent's tool
// timeout); the ledger is kept, as on files.
type agentLogs struct {
	transcripts, replies, costs jetstream.Stream

	mu       sync.Mutex
	subjects map[string]*subjectLog // a transcript's or reply stream's subject: what this process knows of it (logbound.go)
}

// replyAge is how long a piece of a streamed reply is kept.
const replyAge = 24 * time.Hour

// maxCost bounds one ledger entry (a few hundred bytes in practice).
const maxCost = 64 << 10

// openAgentLogs makes the three streams on first use.
func (s *State) openAgentLogs(ctx context.Context) (err error) {
	n := s.names
	if s.logs.transcripts, err = s.c.Stream(ctx, jetstream.StreamConfig{Name: n.Transcripts,
		Subjects: []string{n.TranscriptPrefix + ">"}, MaxMsgSize: state.MaxEntry + idRoom}); err != nil {
		return err
	}
	if s.logs.replies, err = s.c.Stream(ctx, jetstream.StreamConfig{Name: n.Replies,
		Subjects: []string{n.ReplyPrefix + ">"}, MaxMsgSize: state.MaxEntry + idRoom, MaxAge: replyAge}); err != nil {
		return err
	}
	s.logs.costs, err = s.c.Stream(ctx, jetstream.StreamConfig{Name: n.Costs,
		Subjects: []string{n.CostSubject}, MaxMsgSize: maxCost + idRoom})
	return err
}

// forgetLogs purges agent's transcript and reply stream, and their cuts'
// marks (RemoveAgent).
func (s *State) forgetLogs(ctx context.Context, agent string) error {
	for _, k := range []state.Log{state.LogTranscript, state.LogReplies} {
		l := s.boundedLog(k, agent)
		for _, sub := range []string{l.subject, l.cutSubject} {
			if err := l.stream.Purge(ctx, jetstream.WithPurgeSubject(sub)); err != nil {
				return err
			}
		}
		s.forgetSize(l.subject)
	}
	return nil
}

func (s *State) AppendTranscript(agent string, entries ...any) error {
	if err := state.CheckName(agent); err != nil {
		return err
	}
	return s.appendBounded(s.boundedLog(state.LogTranscript, agent), entries...)
}

func (s *State) ReadTranscript(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	return s.readBounded(s.boundedLog(state.LogTranscript, agent), from, fn)
}

func (s *State) TranscriptEnd(agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	return s.subjectEnd(s.logs.transcripts, s.names.TranscriptPrefix+agent)
}

// LastTranscript reads the transcript forwards, keeping only the last n
// entries keep accepts: JetStream reads a subject forwards only, so the
// cost follows the transcript's length while what is held follows n.
func (s *State) LastTranscript(agent string, n int, keep func(raw []byte) bool) ([]json.RawMessage, int, error) {
	if err := state.CheckName(agent); err != nil {
		return nil, 0, err
	}
	var last []json.RawMessage
	total := 0
	_, err := s.readBounded(s.boundedLog(state.LogTranscript, agent), 0, func(raw json.RawMessage, _ int64) error {
		if keep != nil && !keep(raw) {
			return nil
		}
		total++
		if len(last) == n {
			last = last[1:]
		}
		last = append(last, raw)
		return nil
	})
	return last, total, err
}

func (s *State) AppendReply(agent string, v any) error {
	if err := state.CheckName(agent); err != nil {
		return err
	}
	return s.appendBounded(s.boundedLog(state.LogReplies, agent), v)
}

func (s *State) ReadReplies(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	return s.readBounded(s.boundedLog(state.LogReplies, agent), from, fn)
}

func (s *State) RepliesEnd(agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	return s.subjectEnd(s.logs.replies, s.names.ReplyPrefix+agent)
}

func (s *State) AppendCost(e cost.Entry) error { return s.publish(s.names.CostSubject, e) }

func (s *State) Costs(since time.Time, fn func(e cost.Entry) error) error {
	_, err := s.readSubject(s.logs.costs, s.names.CostSubject, 0, func(raw json.RawMessage, _ int64) error {
		var e cost.Entry
		if json.Unmarshal(raw, &e) != nil || e.At.Before(since) {
			return nil
		}
		return fn(e)
	})
	return err
}

func (s *State) ReadCosts(from int64, fn func(e cost.Entry, next int64) error) (int64, error) {
	return s.readSubject(s.logs.costs, s.names.CostSubject, from, func(raw json.RawMessage, next int64) error {
		var e cost.Entry
		if json.Unmarshal(raw, &e) != nil {
			return nil
		}
		return fn(e, next)
	})
}

// publish appends v, as JSON, to subject; acknowledged once the stream
// holds it.
func (s *State) publish(subject string, v any) error {
	b, err := state.EncodeEntry(v)
	if err != nil {
		return err
	}
	return s.publishRaw(subject, b)
}

// idRoom is what a message id's header adds to an entry ("NATS/1.0",
// "Nats-Msg-Id: " and writeID's 26 characters: 53 bytes), rounded up: a
// stream's MaxMsgSize and the hub's payload bound (1 MiB) count it, which
// state.MaxEntry leaves room for.
const idRoom = 128

// publishRaw appends b to subject once (publishOnce): a repeat while the
// hub changes leaders carries the first attempt's message id, so a
// transcript entry, a reply piece or a cost entry whose answer was lost
// is stored once, never twice (a cost counted twice would be billed
// twice).
func (s *State) publishRaw(subject string, b []byte) error { return s.publishOnce(subject, b) }
