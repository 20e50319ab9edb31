package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Policy says what a confined command may touch. Paths are absolute and
// real (symlinks resolved).
type Policy struct {
	Workspace string   `json:"workspace"`          // read-write: the command's working tree
	TempDir   string   `json:"temp_dir"`           // read-write: the command's private TMPDIR
	Writable  []string `json:"writable,omitempty"` // read-write too (config sandbox.writable)
	// Hide are paths the command may not read, list or write: pm's state.
	Hide []string `json:"hide,omitempty"`
	// ReadOnly are paths the command may read but not write, whatever
	// grants them otherwise: the repository's git directory and the
	// project's prompts (Steering). Files or directories.
	ReadOnly    []string `json:"read_only,omitempty"`
	DenyNetwork bool     `json:"deny_network,omitempty"` // refuse TCP bind and connect
	// MountNS is set by Command when the helper runs in a new mount
	// namespace, where Hide paths are covered by an empty read-only tmpfs.
	MountNS bool `json:"mount_ns,omitempty"`
	// ParentMountNS is the caller's mount namespace (/proc/self/ns/mnt): the
	// helper mounts only when it is in another one, never in the caller's.
	ParentMountNS string `json:"parent_mount_ns,omitempty"`
	// PIDNS is set by Command when the helper runs under its init in a new
	// PID namespace, where it mounts a /proc of that namespace (a process
	// sees its own pids there, and none of the processes outside).
	PIDNS bool `json:"pid_ns,omitempty"`
	// Overlay shows each Source file (or directory) read-only at its Target path, in the
	// helper's private mount namespace only (no other process sees it; the
	// target file is never written). Without a mount namespace the helper
	// refuses to run the command.
	Overlay []Overlay `json:"overlay,omitempty"`
}

// Overlay is one file shown in place of another inside the sandbox.
type Overlay struct {
	Target string `json:"target"` // the existing file the command sees replaced
	Source string `json:"source"` // the file it sees there instead
}

// Mode names the confinement commands get on this machine.
type Mode string

const (
	// Landlock with a private mount namespace: the whole workspace is
	// writable, the state directory hidden under an empty mount.
	ModeLandlockNS Mode = "landlock"
	// Landlock alone: the state directory left out of the rules.
	ModeLandlock Mode = "landlock (no mount namespace)"
	// No kernel sandbox: the kernel has no Landlock, or config turned it off.
	ModeNone Mode = "none"
)

// Configured is p with the config's sandbox settings (store.Sandbox, the
// one source for run_command and exec agents alike): TCP refused when
// network is false, and the writable directories that resolve to absolute
// real paths (others are dropped: a relative or missing path grants nothing).
func (p Policy) Configured(network *bool, writable []string) Policy {
	p.DenyNetwork = network != nil && !*network
	for _, w := range writable {
		if r, err := filepath.EvalSymlinks(w); err == nil && filepath.IsAbs(r) {
			p.Writable = append(p.Writable, r)
		}
	}
	return p
}

// helperArg is the hidden first argument that makes a binary linking this
// package act as the sandbox helper instead of itself.
const helperArg = "__pm-sandbox-exec"

// Warn receives the one warning that commands run unconfined.
var Warn io.Writer = os.Stderr

var warnOnce sync.Once

func warnUnconfined(why string) {
	warnOnce.Do(func() {
		fmt.Fprintf(Warn, "pm: warning: run_command is not sandboxed (%s); commands run with the file rules of pm only\n", why)
	})
}
