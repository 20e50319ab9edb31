package store

import (
	"os"
	"sort"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
)

// CompleteID resolves what a person typed for an id of kind (ids.Task,
// ids.Request) to the one id that starts with it: a whole id is returned as
// it is (checked by the reader that uses it); a prefix of one or more hex
// digits after "KIND-" that names exactly one record is that record's id.
// A prefix that names several is a usage error whose Try: line lists them;
// one that names none is not found. Anything else is returned unchanged, so
// the reader reports it as it always has.
func (s *Store) CompleteID(kind, given string) (string, error) {
	rest, ok := strings.CutPrefix(given, kind+"-")
	if !ok || ids.Parse(kind, given) == nil || rest == "" || len(rest) > 6 || strings.Trim(rest, "0123456789abcdef") != "" {
		return given, nil
	}
	matches := s.IDsWithPrefix(kind, given)
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", errs.NotFoundf("see pm status --all and pm requests --all for the ids that exist", "no %s id starts with %s", kind, given)
	}
	shown := matches
	if len(shown) > 8 {
		shown = append(shown[:8:8], "…")
	}
	return "", errs.Usagef("type more of it: "+strings.Join(shown, ", "), "%s matches %d %s ids", given, len(matches), kind)
}

// IDsWithPrefix lists the ids of kind (tasks or requests) that start with
// prefix, sorted; for shell completion and CompleteID.
func (s *Store) IDsWithPrefix(kind, prefix string) []string {
	dir, suffix := s.TasksDir(), ""
	if kind == ids.Request {
		dir, suffix = s.RequestsDir(), ".json"
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), suffix)
		if ok && strings.HasPrefix(id, prefix) && ids.Parse(kind, id) == nil {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
