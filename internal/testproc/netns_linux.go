package testproc

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// RerunInNetns runs the test binary's test again (its exact name) in new
// user and network namespaces, this user root there, with env added, and
// fails unless that run passed. It skips, with the reason, where the kernel
// or the user cannot make the namespaces or there is no ip command to make
// the links. The run dies with the test (parent death signal).
func RerunInNetns(t testing.TB, test string, env ...string) {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2) to make the veth link")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Skipf("cannot make user and network namespaces here (%v): unprivileged user namespaces off?", err)
	}
	t.Logf("in the namespaces:\n%s", out)
	if err != nil {
		t.Fatalf("the test in its namespaces failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatal("the test in its namespaces did not pass")
	}
}

// IP runs the ip command with args in this process's network namespace.
func IP(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}
