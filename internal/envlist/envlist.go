// Package envlist reads and edits environment lists (the KEY=value strings
// os.Environ returns and exec.Cmd.Env takes): the one implementation for
// every process pm starts, so a variable set for a child replaces an
// inherited one instead of sitting beside it.
//
// Invariants: the functions never change their input's backing array; Set
// leaves exactly one entry for its name; Get agrees with what a child
// started with the list sees (exec.Cmd keeps the last of duplicates).
package envlist

import "strings"

// Set is env with name=value, any inherited name= dropped.
func Set(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// Get is name's value in env ("" when absent; the last one when repeated).
func Get(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val
		}
	}
	return v
}
