package inbox_test

import (
	"reflect"
	"testing"

	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/state/fsstate"
)

// Chains walks back from a caller to everyone waiting on it: through the
// request its cause names (an llm resident answering one), or, with no
// cause (an exec resident), through every request past its cursor; the
// human ends a chain, and a request its host skipped (a run that ended)
// waits on nothing.
func TestChains(t *testing.T) {
	req := func(from, to, corr, cause string) inbox.Message {
		return inbox.Message{Kind: inbox.KindRequest, From: from, To: to, Corr: corr, Cause: cause, Text: "?"}
	}
	for _, tc := range []struct {
		name        string
		msgs        []inbox.Message
		skip        string // an agent whose run ended before the last message
		from, cause string
		want        [][]string
	}{
		{"nobody waits", nil, "", "a", "", [][]string{{"a"}}},
		{"the human ends the chain", []inbox.Message{req("human", "a", "rq-000001", "")}, "", "a", "rq-000001", [][]string{{"a"}}},
		{"by cause, two deep",
			[]inbox.Message{req("human", "a", "rq-000001", ""), req("a", "b", "rq-000002", "rq-000001"), req("b", "c", "rq-000003", "rq-000002")},
			"", "c", "rq-000003", [][]string{{"c", "b", "a"}}},
		{"by cause, only the request it answers",
			[]inbox.Message{req("a", "c", "rq-000001", ""), req("b", "c", "rq-000002", "")},
			"", "c", "rq-000002", [][]string{{"c", "b"}}},
		{"no cause: every caller of its run, through an exec caller too",
			[]inbox.Message{req("x", "a", "rq-000001", ""), req("a", "b", "rq-000002", ""), req("y", "b", "rq-000003", "")},
			"", "b", "", [][]string{{"b", "a", "x"}, {"b", "y"}}},
		{"no cause: a run that ended leaves its requests behind",
			[]inbox.Message{req("a", "b", "rq-000001", ""), req("y", "b", "rq-000002", "")},
			"b", "b", "", [][]string{{"b", "y"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			st := fsstate.New(s)
			for i, m := range tc.msgs {
				if i == len(tc.msgs)-1 && tc.skip != "" {
					end, err := st.MailboxEnd(tc.skip)
					if err != nil {
						t.Fatal(err)
					}
					if err := st.SetMailboxCursor(tc.skip, end); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := inbox.Send(s, st, m); err != nil {
					t.Fatal(err)
				}
			}
			if got := inbox.Chains(st, tc.from, tc.cause); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Chains(%s, %q) = %q; want %q", tc.from, tc.cause, got, tc.want)
			}
		})
	}
}
