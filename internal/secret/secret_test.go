package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const key = "sk-test-SECRET-0123456789"

func TestMask(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		text    string
		want    string
	}{
		{"every occurrence", []string{"sk-1-abcd", ""}, "a sk-1-abcd b sk-1-abcd c", "a " + Masked + " b " + Masked + " c"},
		// A dummy key for a local model is no secret worth corrupting the
		// model's text for (issue 25: "suggested_fi[masked]" for the key "x").
		{"short dummy key", []string{"x"}, `{"suggested_fix": "x"}`, `{"suggested_fix": "x"}`},
		{"seven characters", []string{"1234567"}, "a 1234567 b", "a 1234567 b"},
		{"ollama", []string{"ollama"}, "run ollama serve", "run ollama serve"},
		{"an ordinary word", []string{"notneeded"}, "the key is notneeded here", "the key is notneeded here"},
		{"a word with capitals", []string{"Placeholder"}, "a Placeholder b", "a Placeholder b"},
		{"eight characters with a digit", []string{"abcdefg1"}, "a abcdefg1 b", "a " + Masked + " b"},
		{"empty secret changes nothing", []string{""}, "nothing", "nothing"},
		{"no secrets", nil, "sk-1-abcd", "sk-1-abcd"},
		{"longer first", []string{"abcd1234", "abcd1234efgh"}, "x abcd1234efgh y abcd1234", "x " + Masked + " y " + Masked},
		{"duplicates", []string{key, key}, key, Masked},
		{"adjacent", []string{key}, key + key, Masked + Masked},
		{"no match", []string{key}, "sk-test-", "sk-test-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.secrets...).Mask(tt.text); got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestAddCopies(t *testing.T) {
	a := New("first-secret")
	b := a
	b.Add("second-secret")
	if a.Mask("second-secret") != "second-secret" {
		t.Error("Add on a copy changed the original")
	}
	if b.Mask("first-secret second-secret") != Masked+" "+Masked {
		t.Error("Add lost a secret")
	}
	if c := a.With("third-secret"); a.Mask("third-secret") != "third-secret" || c.Mask("third-secret") != Masked {
		t.Error("With changed the original or lost the value")
	}
	var zero Set
	if !zero.Empty() || zero.Mask(key) != key || !New("").Empty() {
		t.Error("the zero Set or a Set of empty values masks something")
	}
}

// streamTexts are split at every point (and in pieces of every size) by the
// stream tests below.
var streamTexts = []string{
	"the key is " + key + ", keep it",
	key + key,
	"sk-test- is not it, sk-test-SECRET-0123 neither",
	"ends with the start sk-test-SEC",
	"sk-test-SECRET-012sk-test-SECRET-0123456789",
	"",
	"no secret at all\n",
}

// Streamed text is masked even when a secret arrives split across pieces: a
// possible start of a secret is held back until the next piece settles it.
func TestMaskStreamAcrossPieces(t *testing.T) {
	set := New(key, "other-secret-value")
	for _, text := range streamTexts {
		for step := 1; step <= len(text)+1; step++ {
			var got strings.Builder
			pend := ""
			for i := 0; i < len(text); i += step {
				var out string
				out, pend = set.MaskStream(pend + text[i:min(i+step, len(text))])
				if strings.Contains(out, key) || strings.Contains(got.String()+out, key) {
					t.Fatalf("%q step %d: passed on %q", text, step, out)
				}
				got.WriteString(out)
			}
			got.WriteString(set.Mask(pend))
			if want := set.Mask(text); got.String() != want {
				t.Errorf("%q step %d: streamed %q, want %q", text, step, got.String(), want)
			}
		}
	}
}

// A Writer gives the same bytes as masking the whole text, wherever the text
// is cut into two writes, and never lets the key reach the underlying writer.
func TestWriterEverySplit(t *testing.T) {
	set := New(key)
	for _, text := range streamTexts {
		for cut := 0; cut <= len(text); cut++ {
			var buf bytes.Buffer
			w := set.Writer(&buf)
			for _, part := range []string{text[:cut], text[cut:]} {
				if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
					t.Fatalf("Write = %d, %v", n, err)
				}
				if strings.Contains(buf.String(), key) {
					t.Fatalf("%q cut %d: the key reached the writer: %q", text, cut, buf.String())
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if want := set.Mask(text); buf.String() != want {
				t.Errorf("%q cut %d: wrote %q, want %q", text, cut, buf.String(), want)
			}
		}
	}
}

func TestWriterPassesThroughWithoutSecrets(t *testing.T) {
	var buf bytes.Buffer
	w := New().Writer(&buf)
	if _, err := w.Write([]byte("sk-")); err != nil || buf.String() != "sk-" {
		t.Errorf("wrote %q, %v; want it passed on at once", buf.String(), err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsErrors(t *testing.T) {
	w := New(key).Writer(failWriter{})
	if _, err := w.Write([]byte("hello\n")); err == nil {
		t.Error("Write hid the underlying error")
	}
	if _, err := w.Write([]byte("sk-")); err != nil {
		t.Errorf("held text failed: %v", err)
	}
	if err := w.Flush(); err == nil {
		t.Error("Flush hid the underlying error")
	}
}

// Concurrent writers each write whole lines: every line arrives, masked.
func TestWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := New(key).Writer(&buf)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, _ = w.Write([]byte("line " + key + "\n"))
			}
		}()
	}
	wg.Wait()
	_ = w.Flush()
	if strings.Contains(buf.String(), key) || strings.Count(buf.String(), "line "+Masked+"\n") != 200 {
		t.Errorf("concurrent writes: %q", buf.String())
	}
}

func TestIsSecretEnv(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"OPENAI_API_KEY", true},
		{"ANTHROPIC_API_KEY", true},
		{"GITHUB_TOKEN", true},
		{"aws_secret_access_key", true},
		{"DB_PASSWORD", true},
		{"MYSQL_PASSWD", true},
		{"GPG_PASSPHRASE", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"PATH", false},
		{"HOME", false},
		{"OPENAI_BASE_URL", false},
		{"PM_MODEL", false},
		{"GIT_AUTHOR_NAME", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsSecretEnv(tt.name); got != tt.want {
			t.Errorf("IsSecretEnv(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, p := range ProviderVars {
		if !IsSecretEnv(p) {
			t.Errorf("provider variable %s is not secret", p)
		}
	}
}

func TestFilterEnv(t *testing.T) {
	in := []string{"PATH=/bin", "OPENAI_API_KEY=" + key, "LEAKY=" + key, "github_token=x", "EMPTY=", "NOEQUALS"}
	want := []string{"PATH=/bin", "LEAKY=" + key, "EMPTY=", "NOEQUALS"}
	if got := FilterEnv(in); !reflect.DeepEqual(got, want) {
		t.Errorf("FilterEnv = %q, want %q", got, want)
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		text    string
		want    string
	}{
		{"provider key", []string{"OPENAI_API_KEY=" + key}, "k=" + key, "k=" + Masked},
		{"any secret name", []string{"MY_TOKEN=tok-0123456789"}, "tok-0123456789", Masked},
		{"innocent name is not collected", []string{"LEAKY=" + key}, key, key},
		{"short values are not collected", []string{"KEYBOARD=us", "API_KEY=1234567"}, "us 1234567", "us 1234567"},
		{"eight is enough", []string{"API_KEY=12345678"}, "12345678", Masked},
		{"padded key masked trimmed", []string{"OPENAI_API_KEY= " + key + "\n"}, "[" + key + "]", "[" + Masked + "]"},
		{"no equals", []string{"OPENAI_API_KEY"}, "OPENAI_API_KEY", "OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromEnv(tt.environ).Mask(tt.text); got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

type record struct {
	Name  string
	Notes []string
}

type label string

func TestMaskData(t *testing.T) {
	set := New(key)
	tests := []struct {
		name string
		data map[string]any
		want map[string]any
	}{
		{"nil", nil, nil},
		{"no secret", map[string]any{"n": 1, "s": "x", "l": []string{"a"}}, map[string]any{"n": 1, "s": "x", "l": []string{"a"}}},
		{"string", map[string]any{"s": "k=" + key, "n": 2}, map[string]any{"s": "k=" + Masked, "n": 2}},
		{"nested", map[string]any{"m": map[string]any{"l": []any{"a", key, 3}}}, map[string]any{"m": map[string]any{"l": []any{"a", Masked, 3}}}},
		{"key of a map", map[string]any{key: true}, map[string]any{Masked: true}},
		{"typed slice", map[string]any{"files": []string{"a.go", key + ".txt"}}, map[string]any{"files": []string{"a.go", Masked + ".txt"}}},
		{"typed string", map[string]any{"l": label(key)}, map[string]any{"l": label(Masked)}},
		{"struct", map[string]any{"r": record{Name: "n", Notes: []string{key}}}, map[string]any{"r": record{Name: "n", Notes: []string{Masked}}}},
		{"pointer", map[string]any{"p": &record{Notes: []string{key}}}, map[string]any{"p": &record{Notes: []string{Masked}}}},
		{"marshaler", map[string]any{"j": json.RawMessage(`{"k":"` + key + `"}`)}, map[string]any{"j": map[string]any{"k": Masked}}},
		{"struct without secret", map[string]any{"r": record{Name: "n"}}, map[string]any{"r": record{Name: "n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := set.MaskData(tt.data); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("MaskData = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// MaskData never changes the caller's map.
func TestMaskDataCopies(t *testing.T) {
	inner := []any{key}
	data := map[string]any{"s": key, "l": inner}
	_ = New(key).MaskData(data)
	if data["s"] != key || inner[0] != key {
		t.Errorf("MaskData changed its input: %v", data)
	}
}

// A secret JSON would escape is caught in a value that writes its own
// JSON (the escaped form), and in a struct's field (the raw string).
func TestMaskValueEscapedSecret(t *testing.T) {
	odd := `sk-<odd>&"quoted"`
	set := New(odd)
	raw, _ := json.Marshal(map[string]string{"V": "x " + odd})
	if got, want := set.MaskValue(json.RawMessage(raw)), map[string]any{"V": "x " + Masked}; !reflect.DeepEqual(got, want) {
		t.Errorf("MaskValue(RawMessage) = %#v, want %#v", got, want)
	}
	if got, want := set.MaskValue(struct{ V string }{"x " + odd}), (struct{ V string }{"x " + Masked}); !reflect.DeepEqual(got, want) {
		t.Errorf("MaskValue(struct) = %#v, want %#v", got, want)
	}
}

// A struct keeps its type and the caller's copy (its slices too) is
// never written: a bus payload is masked this way.
func TestMaskValueKeepsTypeAndCopies(t *testing.T) {
	in := record{Name: "n " + key, Notes: []string{"a", key}}
	got := New(key).MaskValue(in)
	if want := (record{Name: "n " + Masked, Notes: []string{"a", Masked}}); !reflect.DeepEqual(got, want) {
		t.Errorf("MaskValue = %#v, want %#v", got, want)
	}
	if in.Name != "n "+key || in.Notes[1] != key {
		t.Errorf("MaskValue changed its input: %#v", in)
	}
	if clean := (record{Name: "n"}); !reflect.DeepEqual(New(key).MaskValue(clean), clean) {
		t.Error("a value without a secret changed")
	}
}
