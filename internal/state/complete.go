package state

import (
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
)

// CompleteID resolves what a person typed for an id of kind (ids.Task,
// ids.Request) to the one id of st's records that starts with it: a whole
// id is returned as it is (checked by the reader that uses it); a prefix of
// one to six hex digits after "KIND-" that names exactly one record is that
// record's id. A prefix that names several is a usage error whose Try: line
// lists them; one that names none is not found. Anything else is returned
// unchanged, so the reader reports it as it always has. The ids come from
// st (IDsWithPrefix), so a prefix completes alike on every machine of a
// hub project.
func CompleteID(st State, kind, given string) (string, error) {
	rest, ok := strings.CutPrefix(given, kind+"-")
	if !ok || ids.Parse(kind, given) == nil || rest == "" || len(rest) > 6 || strings.Trim(rest, "0123456789abcdef") != "" {
		return given, nil
	}
	matches, err := st.IDsWithPrefix(kind, given)
	if err != nil {
		return "", err
	}
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
