package lite

import (
	"strconv"
	"strings"
)

// cmdLine is pm say's or pm chat's arguments after the command name, parsed
// as cobra (spf13/pflag) parses them with the two flags lite knows, --phase
// and --json: flags anywhere among the arguments, "--" ending them, the
// last of a repeated flag winning. pflag itself is not linked: it links the
// net package, whose start-up every pm say would pay (docs/benchmarks.md).
// FuzzCmdLine holds the two parsers to the same results.
type cmdLine struct {
	phase  string
	asJSON bool
	args   []string // the positional arguments
	dashAt int      // how many of args came before "--"; -1 without one
}

// parseCmdLine parses argv; ok is false for anything pflag would refuse or
// treat otherwise (another flag, -h, a shorthand, a bad bool, a missing
// value): pm-full then runs the command and says what is wrong.
func parseCmdLine(argv []string) (c cmdLine, ok bool) {
	c.dashAt = -1
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			c.dashAt = len(c.args)
			c.args = append(c.args, argv[i+1:]...)
			return c, true
		case !strings.HasPrefix(a, "-") || a == "-":
			c.args = append(c.args, a)
		case !strings.HasPrefix(a, "--"):
			return c, false // shorthands: pm-full's
		default:
			name, value, hasValue := strings.Cut(a[2:], "=")
			switch name {
			case "phase":
				if !hasValue {
					if i+1 == len(argv) {
						return c, false // "flag needs an argument"
					}
					i++
					value = argv[i]
				}
				c.phase = value
			case "json":
				if !hasValue {
					value = "true"
				}
				b, err := strconv.ParseBool(value)
				if err != nil {
					return c, false
				}
				c.asJSON = b
			default:
				return c, false
			}
		}
	}
	return c, true
}
