package cli

import (
	"runtime/debug"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}
	cases := []struct {
		linked string
		info   *debug.BuildInfo
		want   string
	}{
		{"", nil, "devel"},
		{"v1.2.3", nil, "v1.2.3"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "devel (commit 0123456789ab, modified)"},
		{"v2.0.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}, Settings: vcs[:1]}, "v2.0.0 (commit 0123456789ab)"},
	}
	for _, c := range cases {
		if got := formatVersion(c.linked, c.info); got != c.want {
			t.Errorf("formatVersion(%q, %+v) = %q, want %q", c.linked, c.info, got, c.want)
		}
	}
}
