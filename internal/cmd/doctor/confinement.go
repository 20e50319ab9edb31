package doctor

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/sandbox"
)

// Report is what pm can confine on this machine with this project's config.
type Report struct {
	Kernel      string `json:"kernel,omitempty"`
	User        string `json:"user"`
	LandlockABI int    `json:"landlock_abi"`
	NoLandlock  string `json:"no_landlock,omitempty"` // why there is none
	MountNS     bool   `json:"mount_namespace"`
	NoMountNS   string `json:"no_mount_namespace,omitempty"` // why there is none
	// Platform is what this OS lacks besides the sandbox (macOS: cgroups,
	// the run marker, the subreaper...); empty on Linux.
	Platform     string `json:"platform_limits,omitempty"`
	MountNSVia   string `json:"mount_namespace_via,omitempty"`
	Mode         string `json:"mode"` // sandbox.Available()
	Config       string `json:"config"`
	RunCommand   string `json:"run_command"` // as pm agents says for an llm agent
	ExecAgents   string `json:"exec_agents"` // as pm agents says for an exec agent
	ExecSetting  string `json:"exec_setting"`
	DesignTest   string `json:"design_test"`
	Network      string `json:"network"`
	Features     []Item `json:"features"`
	GivesUp      []Item `json:"gives_up"` // what the modes in effect here give up
	Alternatives []Item `json:"other_modes"`
	// Store is where the records are (store.go); nil outside a project.
	Store *StoreReport `json:"store,omitempty"`
}

// Item is one line of a report section: what, and yes or no with why.
type Item struct {
	What string `json:"what"`
	Has  bool   `json:"has"`
	Note string `json:"note,omitempty"`
}

// Confinement probes the sandbox the way pm's agent hosts start it (a
// non-dumpable process, see asHost) and reads the config of the project
// here, if any.
func Confinement(f *cmdutil.Factory) Report {
	asHost()
	r := Report{Kernel: kernel(), User: whoami(), LandlockABI: sandbox.ABI(), NoLandlock: sandbox.Why(),
		Mode: string(sandbox.Available()), NoMountNS: sandbox.NoMountNS(), Platform: driver.PlatformLimits()}
	r.MountNS = sandbox.Available() == sandbox.ModeLandlockNS
	if r.MountNS {
		r.MountNSVia = "a new mount namespace (pm runs as root)"
		if os.Getuid() != 0 {
			r.MountNSVia = "a new user namespace, the user mapped to root there (no capability outside it; all dropped before the command runs)"
		}
	}
	s, err := f.Store()
	cfg := &config.Config{}
	if err != nil {
		r.Config = "no project here (" + err.Error() + "): the defaults"
	} else {
		r.Config = s.ConfigPath()
		cfg = s.Config()
	}
	r.RunCommand = modeOf(cfg.Sandbox.Off, false, agent.SandboxOff)
	r.ExecAgents = modeOf(!cfg.Runtime.Exec.Sandboxed(), cfg.Runtime.Exec.SandboxRequired(), agent.SandboxExecOff)
	switch {
	case cfg.Runtime.Exec.Sandbox == nil:
		r.ExecSetting = "runtime.exec.sandbox unset: on by default"
	case *cfg.Runtime.Exec.Sandbox:
		r.ExecSetting = "runtime.exec.sandbox true: an agent is not started where there is no sandbox"
	default:
		r.ExecSetting = "runtime.exec.sandbox false: exec agents run unconfined, as the user (trusted agents only)"
	}
	if len(cfg.Runtime.Exec.ConfigPaths) > 0 {
		r.ExecSetting += "; writable for the CLI: " + strings.Join(cfg.Runtime.Exec.ConfigPaths, ", ")
	}
	switch {
	case cfg.Sandbox.Off:
		r.DesignTest = "refused: sandbox.off"
	case !r.MountNS:
		r.DesignTest = "refused: it needs a mount namespace (the candidate is shown to the test only)"
	default:
		r.DesignTest = "runs: the candidate file mounted over the real one, in the test's namespace only"
	}
	r.Network = "allowed (sandbox.network unset or true): run_command and exec agents may connect anywhere over TCP; http_get only to public addresses"
	if cfg.Sandbox.Network != nil && !*cfg.Sandbox.Network {
		r.Network = "TCP bind and connect refused (sandbox.network false)"
		if r.LandlockABI < 4 {
			r.Network += ", but this kernel's Landlock (ABI < 4) cannot refuse them: not enforced"
		}
	}
	abi := r.LandlockABI
	r.Features = []Item{
		{"files: write only the project, a private TMPDIR, sandbox.writable (and exec agents' config paths)", abi >= 1, "Landlock ABI 1"},
		{"files moved or linked between directories of the project", abi >= 2, "ABI 2; refused without it"},
		{"TCP refused with sandbox.network false", abi >= 4, "ABI 4"},
		{"signals and abstract unix sockets to processes outside the command refused", abi >= 6, "ABI 6"},
		{"other processes' /proc/PID/environ and memory refused (the provider key)", abi >= 1, "Landlock's ptrace scoping"},
		{"capabilities dropped, no_new_privs (a pm run as root hands agents a plain uid 0)", abi >= 1, "the sandbox helper"},
		{"the state directory hidden: not readable, not listed", r.MountNS, "mount namespace; without it readable no, listed yes"},
		{".git (whatever git directory it names), core.hooksPath, prompts/ read-only", abi >= 1, "read-only mounts, or left out of the Landlock rules"},
		{"files created at the top of the project", r.MountNS, "mount namespace; Landlock alone cannot allow it without allowing it in .git, prompts/ and the state"},
		{"nothing a sandboxed command or exec agent starts outlives it, even its host killed -9; it sees only its own processes", sandbox.PIDNamespace(), "PID namespace with its own /proc; " + withoutPIDNS},
		{"nothing an unsandboxed command or exec agent (sandbox.off, runtime.exec.sandbox false, no Landlock) starts outlives its host killed -9", sandbox.Contained(), "PID namespace with its own /proc, as the user; " + withoutPIDNS},
	}
	for _, m := range []sandbox.Mode{sandbox.ModeLandlockNS, sandbox.ModeLandlock, sandbox.ModeNone} {
		it := Item{What: string(m), Has: string(m) == r.Mode, Note: givesUp(m)}
		if it.Has {
			r.GivesUp = append(r.GivesUp, it)
		} else {
			r.Alternatives = append(r.Alternatives, it)
		}
	}
	return r
}

// withoutPIDNS is what the fallbacks give up (docs/security.md, "Processes").
const withoutPIDNS = "without it a cgroup holds the run until the supervisor, pm kill or pm reset ends it, and with no cgroup an env -i child of a host killed -9 runs on for good"

// modeOf is what pm agents says an agent's commands run under, given the
// config.
func modeOf(off, required bool, offMode string) string {
	switch m := sandbox.Available(); {
	case off:
		return offMode
	case m != sandbox.ModeNone:
		return string(m)
	case required:
		return "not started (no Landlock in this kernel, and the config requires the sandbox)"
	}
	return agent.SandboxNoKernel
}

// givesUp says what mode m does not confine (docs/security.md, per mode).
func givesUp(m sandbox.Mode) string {
	switch m {
	case sandbox.ModeLandlockNS:
		return "what the user may read outside the project stays readable (home, keys: run pm as a dedicated user); UDP is not restricted before Landlock ABI 10; a .git or prompts/ that does not exist when a command starts can be created by it"
	case sandbox.ModeLandlock:
		return "the state directory's names are listed (not read); nothing can be created at the top of the project (only inside existing entries: a go build that writes its binary there fails); pm design --test refused; and what the mount namespace mode gives up"
	}
	return "commands run as the user, with secret variables removed: they can read the state directory and other processes of the user; exec agents run unconfined (or are not started with runtime.exec.sandbox true); pm's file primitives keep their own containment"
}

// Print writes r for a person.
func (r Report) Print(w io.Writer) error {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "machine: %s, as %s\n", r.Kernel, r.User)
	if r.LandlockABI > 0 {
		fmt.Fprintf(&b, "landlock: ABI %d\n", r.LandlockABI)
	} else {
		fmt.Fprintf(&b, "landlock: no (%s)\n", r.NoLandlock)
	}
	switch {
	case r.MountNS:
		fmt.Fprintf(&b, "mount namespace: yes, through %s\n", r.MountNSVia)
	case r.LandlockABI > 0:
		fmt.Fprintf(&b, "mount namespace: no (%s)\n", r.NoMountNS)
	}
	if r.Platform != "" {
		fmt.Fprintf(&b, "not available: %s\n", r.Platform)
	}
	fmt.Fprintf(&b, "config: %s\n\n", r.Config)
	fmt.Fprintf(&b, "run_command:     %s\n", r.RunCommand)
	fmt.Fprintf(&b, "exec agents:     %s (%s)\n", r.ExecAgents, r.ExecSetting)
	fmt.Fprintf(&b, "pm design --test: %s\n", r.DesignTest)
	fmt.Fprintf(&b, "network:         %s\n\n", r.Network)
	b.WriteString("confined here:\n")
	for _, it := range r.Features {
		fmt.Fprintf(&b, "  %-3s  %s (%s)\n", yes(it.Has), it.What, it.Note)
	}
	b.WriteString("\n")
	for _, it := range r.GivesUp {
		fmt.Fprintf(&b, "this machine's mode, %s, gives up: %s\n", it.What, it.Note)
	}
	for _, it := range r.Alternatives {
		fmt.Fprintf(&b, "  (mode %s gives up: %s)\n", it.What, it.Note)
	}
	r.Store.print(&b)
	_, err := io.WriteString(w, b.String())
	return err
}
