package bus

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/plasmodium/pm/internal/fieldfill"
)

// Event.MarshalJSON against encoding/json on an event whose every exported
// field is filled by reflection: a field added to Event and not to the
// codec fails here.
func TestEventCodecKeepsEveryField(t *testing.T) {
	var ev Event
	if err := fieldfill.Fill(&ev); err != nil {
		t.Fatal(err)
	}
	if z := fieldfill.Zero(ev); z != nil {
		t.Fatalf("fieldfill left %v zero", z)
	}
	fast, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(eventFields(ev))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fast, want) {
		t.Errorf("MarshalJSON differs from encoding/json:\n got  %s\n want %s", fast, want)
	}
}
