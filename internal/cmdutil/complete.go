package cmdutil

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// CompleteIDs completes the first argument with the ids of kind (ids.Task,
// ids.Request) that start with what was typed, listed by the project's
// records (state.State's IDsWithPrefix: the state directory's listings, or
// a hub's keys). Nothing completes outside a project, and files are never
// offered.
func CompleteIDs(f *Factory, kind string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		s, err := f.Store()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := f.State(s)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		prefix := toComplete
		if !strings.HasPrefix(prefix, kind+"-") {
			if !strings.HasPrefix(kind+"-", prefix) {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			prefix = kind + "-"
		}
		found, _ := st.IDsWithPrefix(kind, prefix) // none when the records cannot be read
		return found, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteAgents completes the first argument with the agent names that
// start with what was typed (an @ typed first is kept off: pm takes both).
func CompleteAgents(f *Factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		s, err := f.Store()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := f.State(s)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		agents, err := st.Agents()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		typed := strings.TrimPrefix(toComplete, "@")
		var out []cobra.Completion
		for _, a := range agents {
			n := a.Name
			if strings.HasPrefix(n, typed) {
				out = append(out, n)
			}
		}
		slices.Sort(out) // by name, as the agents' directories list
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
