package cgroup

import "testing"

// base puts pm's groups beside the starter's own cgroup, never inside a pm
// group (a host starting a host), and only where the mount shows the path.
func TestBase(t *testing.T) {
	for _, c := range []struct {
		name      string
		m         mount
		own, want string
		ok        bool
	}{
		{"root cgroup", mount{point: "/sys/fs/cgroup/unified", root: "/"}, "/", "/sys/fs/cgroup/unified", true},
		{"a user's scope", mount{point: "/sys/fs/cgroup", root: "/"}, "/user.slice/u.scope", "/sys/fs/cgroup/user.slice/u.scope", true},
		{"a host starting a host", mount{point: "/sys/fs/cgroup", root: "/"}, "/user.slice/" + Dir + "/0123456789abcdef", "/sys/fs/cgroup/user.slice", true},
		{"a container's mount", mount{point: "/sys/fs/cgroup", root: "/docker/x"}, "/docker/x/app", "/sys/fs/cgroup/app", true},
		{"outside the mount's root", mount{point: "/sys/fs/cgroup", root: "/docker/x"}, "/other", "", false},
	} {
		got, ok := base(c.m, c.own)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: base = %q %v, want %q %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// A group taken from a record is used only when it is Dir/<the run> and
// clean: an edited agent.json cannot aim a kill at another cgroup.
func TestValidRefusesOtherGroups(t *testing.T) {
	const run = "0123456789abcdef"
	for _, dir := range []string{
		"",
		"relative/" + Dir + "/" + run,
		"/sys/fs/cgroup/system.slice",
		"/sys/fs/cgroup/" + Dir + "/fedcba9876543210",
		"/sys/fs/cgroup/" + Dir + "/../system.slice/" + Dir + "/" + run + "/..",
		"/sys/fs/cgroup/x/" + run,
		"/tmp/" + Dir + "/" + run, // not under a cgroup mount
	} {
		if Valid(dir, run, true) || Valid(dir, run, false) {
			t.Errorf("Valid(%q) = true", dir)
		}
	}
	if validRun("../x") || validRun("ABCDEF0123456789") || !validRun(run) {
		t.Error("validRun accepts a token the driver never makes, or refuses one it does")
	}
}

func TestUnescape(t *testing.T) {
	if got := unescape(`/mnt/a\040b`); got != "/mnt/a b" {
		t.Errorf("unescape = %q", got)
	}
}
