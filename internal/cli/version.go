package cli

import "runtime/debug"

// version is set at link time (-ldflags "-X github.com/plasmodium/pm/internal/cli.version=v1.2.3").
var version = ""

// Version is what pm --version prints: the link-time or module version,
// then the commit Go recorded when built from a checkout ("v1.2.0 (commit
// 0123456789ab, modified)", "devel (commit ...)", or "devel" when neither
// is known).
func Version() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(version, info)
}

func formatVersion(linked string, info *debug.BuildInfo) string {
	v := linked
	if v == "" && info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if v == "" {
		v = "devel"
	}
	if info == nil {
		return v
	}
	rev, dirty := "", false
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			dirty = kv.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += ", modified"
	}
	return v + " (commit " + rev + ")"
}
