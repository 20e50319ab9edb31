package lite

import (
	"io"
	"strings"
)

// MessageArg is a command's message: words joined, or, when words is the
// one word "-" not written after "--" (dashAt is where "--" fell among the
// arguments, -1 for none; first is where words start), standard input, read
// one byte past limit so an over-long message is refused by the operation,
// not cut. pm say and pm send share it (cmdutil.MessageArg for cobra).
func MessageArg(words []string, dashAt, first int, in io.Reader, limit int) (string, error) {
	if len(words) != 1 || words[0] != "-" || (dashAt >= 0 && dashAt <= first) {
		return strings.Join(words, " "), nil
	}
	data, err := io.ReadAll(io.LimitReader(in, int64(limit)+1))
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}
