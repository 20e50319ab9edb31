package capability

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// MaxBodyText bounds a created prompt object's body (bytes).
const MaxBodyText = 64 << 10

func init() {
	register(builtin("think", "Think before acting: recorded, not sent to anyone.",
		think))
	register(builtin("ask_human", "Ask the human and wait for the answer: before what cannot be undone, or when truly unclear.",
		askHuman))
	register(builtin("create_capability", "Create a new prompt object: a markdown file whose frontmatter lists its capabilities "+
		"and whose body is its identity and behaviour. It is saved in .plasmodium/prompts/ and can be messaged at once "+
		"by any prompt object that lists it, and used as a phase role. Existing names are refused.",
		createCapability))
}

type thinkArgs struct {
	Thought string `json:"thought" jsonschema:"your reasoning"`
}

func think(ctx context.Context, env *Env, a thinkArgs) (string, error) {
	if env.OnThink != nil {
		env.OnThink(a.Thought)
	}
	return "ok", nil
}

type askHumanArgs struct {
	Question string `json:"question" jsonschema:"with the options, if any"`
}

func askHuman(ctx context.Context, env *Env, a askHumanArgs) (string, error) {
	answer, err := request.Ask(ctx, env.Store, env.State, env.Actor, a.Question)
	if err != nil {
		return "", err
	}
	return "the human answered: " + answer, nil
}

// frontmatter is what create_capability writes, in the prompt file format.
type frontmatter struct {
	Name         string   `yaml:"name"`
	Description  string   `yaml:"description"`
	Capabilities []string `yaml:"capabilities"`
}

type createCapabilityArgs struct {
	Name         string   `json:"name" jsonschema:"lowercase name: letters, digits, _ and -, e.g. ruby_debugger"`
	Description  string   `json:"description" jsonschema:"one line: what it does"`
	Capabilities []string `json:"capabilities,omitempty" jsonschema:"what it may use: pm operations, primitives, or other prompt objects"`
	Body         string   `json:"body" jsonschema:"markdown: who it is and how it behaves (its system prompt)"`
}

func createCapability(ctx context.Context, env *Env, a createCapabilityArgs) (string, error) {
	_, o, err := Create(env.Store, env.State, env.Actor, a.Name, a.Description, a.Capabilities, a.Body)
	if err != nil {
		return "", err
	}
	if env.OnCreated != nil {
		env.OnCreated(o)
	}
	caps := "no capabilities"
	if len(o.Capabilities) > 0 {
		caps = "capabilities " + strings.Join(o.Capabilities, ", ")
	}
	return fmt.Sprintf("created prompt object %s (%s) in %s; prompt objects that list %q can message it now, "+
		"and it can be a phase role", o.Name, caps, o.Source, o.Name), nil
}

// grantable is what actor may put in a new object: its own capabilities and
// the universal ones; nil (anything) for the human.
func grantable(set prompt.Set, actor store.Actor) map[string]bool {
	if actor.Agent == nil {
		return nil
	}
	out := map[string]bool{}
	for _, u := range prompt.Universals() {
		out[u] = true
	}
	if o, ok := set[actor.Agent.Prompt]; ok {
		for _, c := range o.Capabilities {
			out[c] = true
		}
	}
	return out
}

// Create writes a new prompt object to .plasmodium/prompts/NAME.md. The name
// must be free (no prompt object and no built-in capability has it) and every
// capability known; the file is parsed back and the whole set validated
// before it is kept. It returns the path and the parsed object.
func Create(s *store.Store, st state.State, actor store.Actor, name, description string, caps []string, body string) (string, *prompt.Object, error) {
	name = strings.TrimSpace(name)
	if !ids.ValidAgentName(name) {
		return "", nil, errs.Usagef("1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit, e.g. ruby_debugger", "bad name %q", name)
	}
	if _, ok := prompt.Builtin(name); ok {
		return "", nil, errs.Statef("pick another name", "%q is a built-in capability", name)
	}
	description = strings.TrimSpace(description)
	if strings.ContainsAny(description, "\n\r") {
		return "", nil, errs.Usagef("keep the description to one line", "the description has line breaks")
	}
	if strings.TrimSpace(body) == "" {
		return "", nil, errs.Usagef("write who it is and how it behaves", "the body is empty")
	}
	if len(body) > MaxBodyText {
		return "", nil, errs.Usagef("keep the body under 64 KiB", "body of %d bytes is too long", len(body))
	}
	set, err := prompt.LoadProject(s, st)
	if err != nil {
		return "", nil, err
	}
	if o, ok := set[name]; ok {
		return "", nil, errs.Statef("pick another name, or use the existing one", "a prompt object %q already exists (%s)", name, o.Source)
	}
	if _, err := st.Agent(name); name == "human" || err == nil {
		return "", nil, errs.Statef("pick another name", "%q is already the name of an agent (or the human)", name)
	}
	granted := grantable(set, actor)
	clean := make([]string, 0, len(caps))
	for _, c := range caps {
		c = strings.TrimSpace(c)
		switch {
		case c == "":
			continue
		case c == name:
			return "", nil, errs.Usagef("list what it uses, not itself", "capability %q is the new object itself", c)
		case !set.Known(c):
			return "", nil, errs.NotFoundf("known: "+strings.Join(prompt.BuiltinNames(""), ", ")+"; prompt objects: "+strings.Join(set.Names(), ", "),
				"unknown capability %q", c)
		case granted != nil && !granted[c]:
			return "", nil, errs.Statef("give it only capabilities you have yourself", "@%s cannot grant %q: it does not have it", actor.Name, c)
		}
		if !contains(clean, c) {
			clean = append(clean, c)
		}
	}
	front, err := yaml.Marshal(frontmatter{Name: name, Description: description, Capabilities: clean})
	if err != nil {
		return "", nil, err
	}
	data := []byte("---\n" + string(front) + "---\n\n" + strings.TrimLeft(body, "\n"))
	if !strings.HasSuffix(string(data), "\n") {
		data = append(data, '\n')
	}
	// Parsed before it is kept (named by its file's name until it has a
	// place), so a text that does not parse is never kept.
	o, err := prompt.Parse(name+".md", data)
	if err != nil {
		return "", nil, errs.Failf("", "the new prompt object does not parse: %v", err)
	}
	path, err := st.CreatePrompt(name, data)
	if err != nil {
		if errors.Is(err, state.ErrConflict) {
			return "", nil, errs.Statef("pick another name", "a prompt object %q was just created by someone else", name)
		}
		return "", nil, err
	}
	o.Source = path
	if _, err := prompt.LoadProject(s, st); err != nil {
		// Should not happen (checked above); never leave a file that breaks every load.
		_ = st.RemovePrompt(name)
		return "", nil, errors.Join(errs.Failf("", "the new prompt object broke the prompt set; removed it"), err)
	}
	s.Notify(bus.Event{Kind: bus.EvCapabilityCreated, Actor: actor.Name, Text: name,
		Data: bus.CapabilityCreated{Name: name, Description: description, Capabilities: clean, Path: path}})
	return path, o, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
