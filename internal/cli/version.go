package cli

import "runtime/debug"

// version is set at link time (-ldflags "-X github.com/plasmodium/pm/internal/cli.version=v1.2.3").
var version = ""

// Version is pm's version: the link-time one, else the module version or
// VCS revision Go recorded in the binary, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
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
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "dev"
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}
