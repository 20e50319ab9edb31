package lite

import (
	"context"
	"io"
	"strings"
)

// MessageArg is a command's message: words joined, or, when words is the
// one word "-" not written after "--" (dashAt is where "--" fell among the
// arguments, -1 for none; first is where words start), standard input, read
// one byte past limit so an over-long message is refused by the operation,
// not cut. The read ends with ctx (^C in pm-full, which catches it). pm say
// and pm send share it (cmdutil.MessageArg for cobra).
func MessageArg(ctx context.Context, words []string, dashAt, first int, in io.Reader, limit int) (string, error) {
	if len(words) != 1 || words[0] != "-" || (dashAt >= 0 && dashAt <= first) {
		return strings.Join(words, " "), nil
	}
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() { // a blocked read cannot be interrupted; the process is ending then
		data, err := io.ReadAll(io.LimitReader(in, int64(limit)+1))
		done <- read{data, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return "", r.err
		}
		return strings.TrimSuffix(string(r.data), "\n"), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
