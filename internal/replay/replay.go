package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/plasmodium/pm/internal/openaitest"
)

// Step is one recorded model turn: text, one tool call, or an HTTP error.
type Step struct {
	Content string          `json:"content,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	// Until repeats this step while the last tool result does not contain
	// this text: the recorded model kept waiting (e.g. for its phase to close).
	Until string `json:"until,omitempty"`
	// Delay is how long the model "thinks" before answering ("2s"), so a
	// test can act while an agent is mid-turn.
	Delay string `json:"delay,omitempty"`
	// ChunkDelay is the pause between the streamed pieces of its content
	// ("100ms"): a model that streams slowly.
	ChunkDelay string `json:"chunk_delay,omitempty"`
	// Status makes the model answer with this HTTP error status (429, 500,
	// ...) instead of a turn, as a provider that is overloaded or failing
	// does; the client is expected to retry. RetryAfter ("2s") is advertised
	// with it.
	Status     int    `json:"status,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	// Usage, when set, is the token usage the model reports for this step
	// (a cost test's fixed figures); otherwise the server estimates it.
	Usage *openaitest.Usage `json:"usage,omitempty"`
}

// Script is the recorded turns of each agent, by role ("owner", "designer",
// ...) or prompt object name ("greeter").
type Script struct {
	Title string            `json:"title"`
	Steps map[string][]Step `json:"steps"`
	// Otherwise is what an agent says once its steps are used up.
	Otherwise map[string]string `json:"otherwise"`
	// Talk, when set, makes the script one of pm demo --talk's demos.
	Talk *Talk `json:"talk,omitempty"`
}

// Talk is a demo played in pm talk: the object the conversation starts
// with and what the human says, in order. The steps answer for the model
// offline; with a real model only the human's side is scripted.
type Talk struct {
	N       int    `json:"n"`
	Name    string `json:"name"`
	Title   string `json:"title"`
	Tagline string `json:"tagline"`
	PO      string `json:"po"`
	// Prompts are prompt objects the demo project brings (prompts/NAME.md),
	// as the seed's demo 4 adds create_capability to the coordinator.
	Prompts map[string]string `json:"prompts,omitempty"`
	Lines   []Line            `json:"lines"`
}

// Line is one thing the human says, the answers to the questions the
// objects ask while it is answered, and the object the conversation moves
// to afterwards (one just created, in demo 4).
type Line struct {
	Say     string   `json:"say"`
	Answers []string `json:"answers,omitempty"`
	Then    string   `json:"then,omitempty"`
}

// Load reads a JSON script.
func Load(r io.Reader) (*Script, error) {
	var s Script
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("replay script: %w", err)
	}
	if t := s.Talk; t != nil && (t.N < 1 || t.Name == "" || t.PO == "" || len(t.Lines) == 0) {
		return nil, fmt.Errorf("replay script: talk needs n (1 or more), name, po and lines")
	}
	for who, steps := range s.Steps {
		for i, st := range steps {
			switch {
			case st.Status != 0:
				if st.Status < 400 || st.Status > 599 || st.Content != "" || st.Tool != "" || st.Until != "" {
					return nil, fmt.Errorf("replay script: %s step %d: an error step gives a status 400-599 and no content, tool or until", who, i+1)
				}
			case st.RetryAfter != "":
				return nil, fmt.Errorf("replay script: %s step %d: retry_after needs a status", who, i+1)
			case (st.Content == "") == (st.Tool == ""):
				return nil, fmt.Errorf("replay script: %s step %d: give content or tool, not both or neither", who, i+1)
			}
			for _, d := range []struct{ what, v string }{{"delay", st.Delay}, {"chunk_delay", st.ChunkDelay}, {"retry_after", st.RetryAfter}} {
				if d.v == "" {
					continue
				}
				if v, err := time.ParseDuration(d.v); err != nil || v < 0 {
					return nil, fmt.Errorf("replay script: %s step %d: invalid %s %q", who, i+1, d.what, d.v)
				}
			}
		}
	}
	return &s, nil
}

// Player answers model requests from a script, keeping one cursor per agent.
type Player struct {
	Script *Script
	mu     sync.Mutex
	state  map[string]*cursor
}

type cursor struct {
	at     int
	issued bool
}

// NewPlayer returns a player for script.
func NewPlayer(s *Script) *Player { return &Player{Script: s, state: map[string]*cursor{}} }

// whoRe finds the agent in its system prompt: "# You are @cedar_a1b2, owner of task"
// or "# You are @oak_c3d4, the designer in phase".
var whoRe = regexp.MustCompile(`You are @([a-z0-9_-]+), (?:the )?([a-z]+)`)

// titleRe finds a resident prompt object by its title line ("# Greeter",
// "# Ruby Debugger" for ruby_debugger).
var titleRe = regexp.MustCompile(`(?m)^# ([A-Za-z]+(?: [A-Za-z]+)*)\s*$`)

// Identify returns the agent's name and role (or object name) from a request.
func Identify(req openaitest.Request) (name, role string) {
	for _, m := range req.Messages {
		if m.Role != "system" {
			continue
		}
		if sm := whoRe.FindStringSubmatch(m.Content); sm != nil {
			return sm[1], sm[2]
		}
		if sm := titleRe.FindStringSubmatch(m.Content); sm != nil {
			po := strings.ReplaceAll(strings.ToLower(sm[1]), " ", "_")
			return po, po
		}
	}
	return "unknown", "unknown"
}

// Reply is the openaitest handler.
func (p *Player) Reply(req openaitest.Request) openaitest.Reply {
	name, role := Identify(req)
	st := p.next(name, p.Script.Steps[role], req.LastMessage())
	if st == nil {
		text := p.Script.Otherwise[role]
		if text == "" {
			text = "PASS"
		}
		return openaitest.Reply{Content: text}
	}
	delay, _ := time.ParseDuration(st.Delay) // checked by Load
	if st.Status != 0 {
		after, _ := time.ParseDuration(st.RetryAfter)
		return openaitest.Reply{Status: st.Status, RetryAfter: after, Delay: delay}
	}
	if st.Tool != "" {
		args := string(st.Args)
		if args == "" {
			args = "{}"
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: st.Tool, Arguments: args}}, Delay: delay, Usage: st.Usage}
	}
	chunk, _ := time.ParseDuration(st.ChunkDelay) // checked by Load
	return openaitest.Reply{Content: st.Content, Delay: delay, ChunkDelay: chunk, Usage: st.Usage}
}

func (p *Player) next(name string, steps []Step, last openaitest.Message) *Step {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.state[name]
	if c == nil {
		c = &cursor{}
		p.state[name] = c
	}
	for c.at < len(steps) {
		st := &steps[c.at]
		if st.Until == "" {
			c.at++
			return st
		}
		if !c.issued {
			c.issued = true
			return st
		}
		if last.Role == "tool" && strings.Contains(last.Content, st.Until) {
			c.at, c.issued = c.at+1, false
			continue
		}
		return st
	}
	return nil
}
