package cmdutil

import "github.com/spf13/cobra"

// CodeDesignerFlag adds --code-designer to c (pm task, pm send, pm talk) and
// returns what it says: nil when the flag was not given, so the next source
// decides (internal/designmode), else on or off (--code-designer=false).
func CodeDesignerFlag(c *cobra.Command) func() *bool {
	on := c.Flags().Bool("code-designer", false,
		"run in code-designer mode: each tool call is checked against its doc first (beats PM_CODE_DESIGNER, frontmatter and config)")
	return func() *bool {
		if !c.Flags().Changed("code-designer") {
			return nil
		}
		v := *on
		return &v
	}
}
