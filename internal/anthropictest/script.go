package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
)

// ScriptFile is the JSON form of scripts (LoadScripts): a list of
// {"match": "...", "turns": [{"bash": "pm say hi"}, {"text": "Done."}]}.
type ScriptFile []struct {
	Match string `json:"match"`
	Turns []struct {
		Bash string `json:"bash,omitempty"`
		Text string `json:"text,omitempty"`
	} `json:"turns"`
}

// LoadScripts adds the scripts of a ScriptFile read from r.
func (s *Server) LoadScripts(r io.Reader) error {
	var f ScriptFile
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("anthropictest: scripts: %w", err)
	}
	for i, sc := range f {
		if sc.Match == "" {
			return fmt.Errorf("anthropictest: script %d has no match", i)
		}
		var turns []Turn
		for j, t := range sc.Turns {
			switch {
			case t.Bash != "" && t.Text == "":
				turns = append(turns, Bash(t.Bash))
			case t.Text != "" && t.Bash == "":
				turns = append(turns, Say(t.Text))
			default:
				return fmt.Errorf("anthropictest: script %d turn %d: give bash or text", i, j)
			}
		}
		s.Script(sc.Match, turns...)
	}
	return nil
}
