package lite_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/lite"
)

func TestMessageArg(t *testing.T) {
	for _, tt := range []struct {
		name   string
		words  []string
		dashAt int
		in     string
		want   string
	}{
		{"words", []string{"hello", "there"}, -1, "ignored", "hello there"},
		{"stdin", []string{"-"}, -1, "from stdin\n", "from stdin"},
		{"a dash after --", []string{"-"}, 0, "ignored", "-"},
		{"stdin keeps inner newlines", []string{"-"}, -1, "a\nb\n\n", "a\nb\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lite.MessageArg(context.Background(), tt.words, tt.dashAt, 0, strings.NewReader(tt.in), 100)
			if err != nil || got != tt.want {
				t.Errorf("MessageArg = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// `sleep 30 | pm say -` must stop at ^C: pm-full catches SIGINT into its
// context, so a read of standard input that ignored the context hung until
// the writer ended.
func TestMessageArgStopsWithTheContext(t *testing.T) {
	r, w := io.Pipe() // a writer that never writes
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := lite.MessageArg(ctx, []string{"-"}, -1, 0, r, 100)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("MessageArg after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing
		t.Fatal("MessageArg still reading standard input after its context ended")
	}
}
