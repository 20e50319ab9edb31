package bus

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/plasmodium/pm/internal/fieldfill"
)

// Event.MarshalJSON against encoding/json on an event whose every exported
// header field is filled by reflection: a field added to Event and not to
// the codec fails here. (Payloads: TestPayloadsRoundTrip.)
func TestEventCodecKeepsEveryField(t *testing.T) {
	var ev Event
	v := reflect.ValueOf(&ev).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() != reflect.TypeFor[Payload]() { // the payload: TestPayloadsRoundTrip
			if err := fieldfill.Fill(f.Addr().Interface()); err != nil {
				t.Fatal(err)
			}
		}
	}
	ev.Kind, ev.Data = EvMessage, MessagePosted{N: 1, Limit: 2}
	if z := fieldfill.Zero(ev); z != nil {
		t.Fatalf("fieldfill left %v zero", z)
	}
	fast, err := ev.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want, err := reference(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fast, want) {
		t.Errorf("MarshalJSON differs from encoding/json:\n got  %s\n want %s", fast, want)
	}
	var back Event
	if err := back.UnmarshalJSON(fast); err != nil || back != ev {
		t.Errorf("read back %+v, %v\nwant %+v", back, err, ev)
	}
}
