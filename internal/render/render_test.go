package render

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/store"
)

func TestPrintMessage(t *testing.T) {
	ts := time.Date(2024, 1, 1, 12, 34, 56, 0, time.Local)
	tests := []struct {
		m    store.Message
		want string
	}{
		{store.Message{Author: "human", Content: "hi", Timestamp: ts}, "[12:34:56] human: hi\n"},
		{store.Message{Author: "oak_0001", Role: "qa", Content: "a\nb", Timestamp: ts}, "[12:34:56] @oak_0001 (qa): a\n    b\n"},
		{store.Message{Author: "oak_0001", Content: "x", Timestamp: ts}, "[12:34:56] @oak_0001: x\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		PrintMessage(&b, tt.m)
		if b.String() != tt.want {
			t.Errorf("PrintMessage = %q, want %q", b.String(), tt.want)
		}
	}
}

func TestPhaseLine(t *testing.T) {
	tests := []struct {
		p     store.Phase
		count int
		want  string
	}{
		{store.Phase{ID: "ph-000001", Name: "Design", Status: store.PhaseActive, MessageLimit: 10, Roles: []string{"designer", "qa"}}, 3,
			`ph-000001 "Design" active 3/10 roles designer,qa`},
		{store.Phase{ID: "ph-000002", Name: "X", Status: store.PhaseClosed, MessageLimit: 2, CloseReason: store.CloseLimit}, 2,
			`ph-000002 "X" closed 2/2 (limit)`},
		// A name that needs quoting reads as fmt's %q wrote it.
		{store.Phase{ID: "ph-000003", Name: "say \"hi\"\n\x1b[2J\u00e9\xff", Status: store.PhaseActive, MessageLimit: 5}, 0,
			fmt.Sprintf("ph-000003 %q active 0/5", "say \"hi\"\n\x1b[2J\u00e9\xff")},
	}
	for _, tt := range tests {
		if got := PhaseLine(&tt.p, tt.count); got != tt.want {
			t.Errorf("PhaseLine = %q, want %q", got, tt.want)
		}
	}
}
