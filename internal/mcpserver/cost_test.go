package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
)

// toolBudget bounds what each set's tools/list costs a model, in tokens
// estimated as bytes/4 of the result's JSON (the rule of thumb for English
// and JSON with BPE tokenizers), less the annotations: a client reads those
// for its own prompts and permissions, it does not hand them to the model.
// README.md quotes the figures this logs.
var toolBudget = map[ToolSet]int{ToolsPO: 700, ToolsTasks: 1700, ToolsAll: 2150} // tasks: +3 for a task's branch (issue 23), costs (issue 26), create_subtask (issue 24)

func TestToolListCost(t *testing.T) {
	for _, set := range []ToolSet{ToolsPO, ToolsTasks, ToolsAll} {
		_, cs := connect(t, newSession(t), set, nil)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			tl.Annotations = nil
		}
		data, err := json.Marshal(res.Tools)
		if err != nil {
			t.Fatal(err)
		}
		tokens := len(data) / 4
		t.Logf("--tools %s: %d tools, %d bytes, ~%d tokens", set, len(res.Tools), len(data), tokens)
		if tokens > toolBudget[set] {
			t.Errorf("--tools %s costs ~%d tokens, over its budget of %d: shorten the descriptions", set, tokens, toolBudget[set])
		}
	}
}
