package bus

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// scripted is a WaitFunc that checks once per step, running the step's
// change first (nil: a spurious wake-up, as after a watcher overflow), then
// ends the follow.
func scripted(steps ...func()) WaitFunc {
	return func(ctx context.Context, _ func() []string, check func() (bool, error)) error {
		for _, step := range append([]func(){nil}, steps...) {
			if step != nil {
				step()
			}
			if done, err := check(); done || err != nil {
				return err
			}
		}
		return errScriptDone
	}
}

var errScriptDone = errors.New("script done")

// collect runs a scripted subscription and returns the delivered texts.
func collect(t *testing.T, b *File, from Cursor) []string {
	t.Helper()
	var got []string
	for d, err := range b.Subscribe(context.Background(), from) {
		if err != nil {
			if !errors.Is(err, errScriptDone) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, d.Event.Text)
	}
	return got
}

// The file bus reads whole lines only: torn, malformed and non-event lines
// are skipped and reported once; an unterminated last line waits for its
// end; wake-ups with nothing new (an overflow re-check) deliver nothing twice.
func TestFileFollowLines(t *testing.T) {
	cases := []struct {
		name    string
		steps   func(t *testing.T, b *File) []func()
		want    []string
		badWant int
	}{
		{
			name: "torn tail waits for its end",
			steps: func(t *testing.T, b *File) []func() {
				return []func(){
					func() { appendRaw(t, b.Path, `{"kind":"message.posted","text":"ha`) },
					func() { appendRaw(t, b.Path, `lf"}`+"\n") },
				}
			},
			want: []string{"a0", "half"},
		},
		{
			name: "malformed lines are skipped once",
			steps: func(t *testing.T, b *File) []func() {
				return []func(){
					func() { appendRaw(t, b.Path, "not json\n[1,2]\n") },
					nil, nil, // re-checks must not report them again
					func() { publish(t, b, "b") },
				}
			},
			want:    []string{"a0", "b"},
			badWant: 2,
		},
		{
			name: "a torn tail ended by the next append is skipped",
			steps: func(t *testing.T, b *File) []func() {
				return []func(){
					func() { appendRaw(t, b.Path, `{"kind":"message.posted","text":"cut`) },
					func() { publish(t, b, "next") },
				}
			},
			want:    []string{"a0", "next"},
			badWant: 1,
		},
		{
			name: "spurious wake-ups deliver nothing twice",
			steps: func(t *testing.T, b *File) []func() {
				return []func(){nil, nil, func() { publish(t, b, "b") }, nil, nil}
			},
			want: []string{"a0", "b"},
		},
		{
			name: "a removed file is read anew when it returns",
			steps: func(t *testing.T, b *File) []func() {
				return []func(){
					func() { _ = b.Reset() },
					nil,
					func() { publish(t, b, "n0", "n1") },
				}
			},
			want: []string{"a0", "n0", "n1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bad []jsonlBad
			b := newFile(t, &bad)
			publish(t, b, "a0")
			b.Wait = scripted(c.steps(t, b)...)
			same(t, collect(t, b, Cursor{}), c.want)
			if len(bad) != c.badWant {
				t.Fatalf("reported %v, want %d", bad, c.badWant)
			}
		})
	}
}

// A follower with Until reads once more after Until turns true, so lines
// written before it did are delivered, then ends without error.
func TestFollowerUntil(t *testing.T) {
	b := newFile(t, nil)
	publish(t, b, "a0")
	closed := false
	f := &Follower{Path: b.Path, Until: func() (bool, error) { return closed, nil },
		Wait: scripted(func() { publish(t, b, "last"); closed = true })}
	var got []string
	for l, err := range f.Lines(context.Background(), Cursor{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Trim(string(l.Raw[strings.Index(string(l.Raw), `"text":`)+7:]), `"}`))
	}
	same(t, got, []string{"a0", "last"})
}
