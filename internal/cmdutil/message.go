package cmdutil

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/lite"
)

// MessageArg is lite.MessageArg for a cobra command: the words args[first:],
// or standard input for a lone "-" not written after "--".
func MessageArg(c *cobra.Command, args []string, first int, in io.Reader, limit int) (string, error) {
	return lite.MessageArg(c.Context(), args[first:], c.ArgsLenAtDash(), first, in, limit)
}
