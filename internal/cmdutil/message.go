package cmdutil

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// MessageArg is a command's message: the words args[first:] joined, or,
// when that is the one word "-" not written after "--", standard input, read
// one byte past limit so an over-long message is refused by the operation,
// not cut. pm say and pm send share it.
func MessageArg(c *cobra.Command, args []string, first int, in io.Reader, limit int) (string, error) {
	words := args[first:]
	if d := c.ArgsLenAtDash(); len(words) != 1 || words[0] != "-" || (d >= 0 && d <= first) {
		return strings.Join(words, " "), nil
	}
	data, err := io.ReadAll(io.LimitReader(in, int64(limit)+1))
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}
