package config

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckKeys(t *testing.T) {
	cases := []struct {
		name, data, want string // want: "" for no error, else a substring
	}{
		{"defaults", `{"limits": {"active_tasks": 3}, "runtime": {"exec": {"command": ["sh"]}}}`, ""},
		{"sandbox", `{"sandbox": {"off": true, "network": false, "writable": ["/x"], "http_allow": ["127.0.0.1:8080"]}}`, ""},
		{"top-level typo", "{\n\"limitz\": {}}", `c.json:2: unknown key "limitz"; did you mean "limits"?`},
		{"nested typo", "{\"runtime\": {\n  \"exec\": {\n    \"commandd\": []}}}", `c.json:3: unknown key "runtime.exec.commandd"; did you mean "runtime.exec.command"?`},
		{"far from anything", `{"zzzzzzzzzzzz": 1}`, `unknown key "zzzzzzzzzzzz"`},
		{"inside a list is data", `{"requests": {"answerers": ["a", "b"]}}`, ""},
		{"budget typo", `{"budgets": {"agent": {"max_turn": 3}}}`, `did you mean "budgets.agent.max_turns"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkKeys("c.json", []byte(c.data))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want %q", err, c.want)
			}
			var ke *KeyError
			if err != nil && !errors.As(err, &ke) {
				t.Fatalf("%T is not a KeyError", err)
			}
		})
	}
}

func TestParseConfigValue(t *testing.T) {
	cases := []struct {
		key, text string
		ok        bool
	}{
		{"limits.active_tasks", "5", true},
		{"limits.active_tasks", "five", false},
		{"runtime.default", "llm", true},
		{"runtime.exec.command", `["sh","a.sh"]`, true},
		{"runtime.exec.command", "sh a.sh", false},
		{"sandbox.network", "false", true},
		{"limits.nope", "1", false},
		{"limits.active_tasks.deeper", "1", false},
	}
	for _, c := range cases {
		_, err := ParseConfigValue(c.key, c.text)
		if (err == nil) != c.ok {
			t.Errorf("ParseConfigValue(%q, %q): %v", c.key, c.text, err)
		}
	}
}
