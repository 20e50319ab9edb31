package store

import (
	"os"
	"sort"
	"strings"

	"github.com/plasmodium/pm/internal/ids"
)

// IDsWithPrefix lists the ids of kind (tasks or requests) that start with
// prefix, sorted, from the state directory's listings (no record is read):
// fsstate's IDsWithPrefix, which state.CompleteID and shell completion use.
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
