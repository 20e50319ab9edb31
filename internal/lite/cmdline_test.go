package lite

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// viaPflag is how cobra parses the arguments with --phase and --json.
func viaPflag(argv []string) (cmdLine, bool) {
	fs := pflag.NewFlagSet("say", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	phase := fs.String("phase", "", "")
	asJSON := fs.Bool("json", false, "")
	if fs.Parse(argv) != nil {
		return cmdLine{}, false
	}
	return cmdLine{phase: *phase, asJSON: *asJSON, args: fs.Args(), dashAt: fs.ArgsLenAtDash()}, true
}

func sameCmdLine(a, b cmdLine) bool {
	return a.phase == b.phase && a.asJSON == b.asJSON && a.dashAt == b.dashAt && slices.Equal(a.args, b.args)
}

func TestParseCmdLine(t *testing.T) {
	for _, argv := range [][]string{
		{}, {"hello"}, {"hello", "world"}, {"-"}, {"--", "-"}, {"--", "--json"},
		{"--phase", "ph-000001", "x"}, {"x", "--phase=ph-000001"}, {"--phase="}, {"--phase"},
		{"--phase", "--json"}, {"--phase", "-x"}, {"--json"}, {"--json=false", "x"}, {"--json=0"},
		{"--json=maybe"}, {"--json="}, {"--json", "false"}, {"-h"}, {"--help"}, {"-j"}, {"-phase"},
		{"--follow"}, {"--ph", "x"}, {"---phase", "x"}, {"x", "--", "--phase", "y"}, {"--phase=a", "--phase=b"},
		{"-", "--"}, {"--phase=a=b"}, {"--=x"}, {"--PHASE", "x"}, {"--json=true", "--json=false"},
	} {
		got, gotOK := parseCmdLine(argv)
		want, wantOK := viaPflag(argv)
		if gotOK != wantOK || wantOK && !sameCmdLine(got, want) {
			t.Errorf("parseCmdLine(%q) = %+v, %v; pflag: %+v, %v", argv, got, gotOK, want, wantOK)
		}
	}
}

// FuzzCmdLine holds parseCmdLine to pflag on argument lists made of the
// words that matter (flags, values, "--", "-") and the fuzzer's own.
func FuzzCmdLine(f *testing.F) {
	f.Add("--phase\x00ph-000001\x00hello", "x")
	f.Add("--json=false\x00--\x00-", "--phase=")
	f.Add("a\x00-\x00--json", "-h")
	vocab := []string{"--phase", "--phase=", "--json", "--json=false", "--json=1", "--", "-", "-h", "--help", "x", "-p", "--follow", "--phase=ph-1"}
	f.Fuzz(func(t *testing.T, words, extra string) {
		var argv []string
		if words != "" {
			argv = strings.Split(words, "\x00")
		}
		for i, c := range []byte(extra) {
			argv = append(argv, vocab[int(c)%len(vocab)])
			if i > 12 {
				break
			}
		}
		got, gotOK := parseCmdLine(argv)
		want, wantOK := viaPflag(argv)
		if gotOK != wantOK || wantOK && !sameCmdLine(got, want) {
			t.Errorf("parseCmdLine(%q) = %+v, %v; pflag: %+v, %v", argv, got, gotOK, want, wantOK)
		}
	})
}
