package capability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/envlist"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/netguard"
	"github.com/plasmodium/pm/internal/netguard/httpguard"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/secret"
	"github.com/plasmodium/pm/internal/store"
)

// Caps of the primitives.
const (
	MaxRead        = 64 << 10  // read_file returns at most this much per call
	MaxWrite       = 1 << 20   // write_file accepts at most this much
	MaxEntries     = 500       // list_files lists at most this many entries
	MaxOutput      = 64 << 10  // run_command keeps this much combined output
	MaxBody        = 256 << 10 // http_get reads at most this much of a body
	DefaultTimeout = 60 * time.Second
	MaxTimeout     = 10 * time.Minute
	HTTPTimeout    = 30 * time.Second
)

func init() {
	register(builtin("read_file", fmt.Sprintf("Read a text file of the workspace, at most %d KiB a call.", MaxRead>>10),
		readFile))
	register(builtin("list_files", fmt.Sprintf("List a directory of the workspace, at most %d entries.", MaxEntries),
		listFiles))
	register(builtin("write_file", fmt.Sprintf("Write a text file of the workspace (at most %d KiB), creating its directories.", MaxWrite>>10),
		writeFile))
	register(builtin("run_command", fmt.Sprintf("Run a command in the workspace: its exit code and output (%d KiB kept). "+
		"Killed after timeout_seconds (default %d, at most %d).", MaxOutput>>10, int(DefaultTimeout.Seconds()), int(MaxTimeout.Seconds())),
		runCommand))
	register(builtin("http_get", fmt.Sprintf("Fetch a URL with HTTP GET (http and https only) and return the status, content type "+
		"and body (at most %d KiB).", MaxBody>>10),
		httpGet))
}

// readFileArgs are read_file's arguments.
type readFileArgs struct {
	Path   string `json:"path" jsonschema:"relative to the workspace"`
	Offset int64  `json:"offset,omitempty" jsonschema:"byte to start at"`
}

func readFile(ctx context.Context, env *Env, a readFileArgs) (string, error) {
	if a.Path == "" {
		return "", errs.Usagef(`{"path": "README.md"}`, "read_file needs a path")
	}
	b, err := newConfinement(env)
	if err != nil {
		return "", err
	}
	_, rel, err := b.path(a.Path, false)
	if err != nil {
		return "", err
	}
	// O_NONBLOCK (in open): opening a FIFO must not hang the agent; only
	// regular files are read.
	f, st, err := b.open(rel, a.Path, os.O_RDONLY, false)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st.IsDir() {
		return "", errs.Usagef("use list_files for directories", "%s is a directory", rel)
	}
	if !st.Mode().IsRegular() {
		return "", errs.Usagef("", "%s is not a regular file", rel)
	}
	size := st.Size()
	if a.Offset < 0 || (a.Offset > size && size > 0) {
		return "", errs.Usagef(fmt.Sprintf("the file has %d bytes", size), "offset %d is out of range", a.Offset)
	}
	if _, err := f.Seek(a.Offset, io.SeekStart); err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRead))
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return fmt.Sprintf("%s is a binary file of %d bytes; not shown", rel, size), nil
	}
	// When the file goes on, end at a rune boundary so no rune is split.
	end := len(data)
	if a.Offset+int64(len(data)) < size {
		for i := end - 1; i >= 0 && i >= end-utf8.UTFMax; i-- {
			if utf8.RuneStart(data[i]) {
				if !utf8.FullRune(data[i:end]) {
					end = i
				}
				break
			}
		}
	}
	text := strings.ToValidUTF8(string(data[:end]), "\uFFFD")
	next := a.Offset + int64(end)
	if next < size {
		text += fmt.Sprintf("\n[cut: showed bytes %d-%d of %d; read on with offset %d]", a.Offset, next, size, next)
	}
	if size == 0 {
		text = "(empty file)"
	}
	return text, nil
}

// skipDirs are not walked into by a recursive listing.
var skipDirs = map[string]bool{".git": true, store.DirName: true}

// listFilesArgs are list_files' arguments.
type listFilesArgs struct {
	Path      string `json:"path,omitempty" jsonschema:"default: the workspace"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"walk subdirectories"`
}

func listFiles(ctx context.Context, env *Env, a listFilesArgs) (string, error) {
	b, err := newConfinement(env)
	if err != nil {
		return "", err
	}
	_, rel, err := b.path(a.Path, false)
	if err != nil {
		return "", err
	}
	dir, err := b.openDir(rel, a.Path, false)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	l := &listing{recursive: a.Recursive}
	prefix := rel + "/"
	if rel == "." {
		prefix = ""
	}
	if err := l.walk(dir, prefix); err != nil && err != errEnough {
		return "", err
	}
	out := l.out
	sort.Strings(out)
	if len(out) == 0 {
		return rel + " is empty", nil
	}
	text := strings.Join(out, "\n")
	if l.more {
		text += fmt.Sprintf("\n[cut: more than %d entries; list a subdirectory]", MaxEntries)
	}
	return text, nil
}

// writeFileArgs are write_file's arguments; Content is a pointer so a
// missing content differs from an empty file.
type writeFileArgs struct {
	Path    string  `json:"path" jsonschema:"relative to the workspace"`
	Content *string `json:"content"`
	Append  bool    `json:"append,omitempty" jsonschema:"add to the end"`
}

func writeFile(ctx context.Context, env *Env, a writeFileArgs) (string, error) {
	if a.Path == "" || a.Content == nil {
		return "", errs.Usagef(`{"path": "notes.md", "content": "..."}`, "write_file needs a path and content")
	}
	if len(*a.Content) > MaxWrite {
		return "", errs.Usagef("write it in parts with append=true", "content of %d bytes is over the %d KiB limit", len(*a.Content), MaxWrite>>10)
	}
	b, err := newConfinement(env)
	if err != nil {
		return "", err
	}
	real, rel, err := b.path(a.Path, true)
	if err != nil {
		return "", err
	}
	if real == b.root {
		return "", errs.Usagef("name a file", "%q is the workspace itself", a.Path)
	}
	f, err := b.openForWrite(rel, a.Path, a.Append)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(*a.Content); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	verb := "wrote"
	if a.Append {
		verb = "appended"
	}
	return fmt.Sprintf("%s %d bytes to %s", verb, len(*a.Content), rel), nil
}

// runCommandArgs are run_command's arguments.
type runCommandArgs struct {
	Command        string `json:"command" jsonschema:"sh -c line"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
}

func runCommand(ctx context.Context, env *Env, a runCommandArgs) (string, error) {
	if strings.TrimSpace(a.Command) == "" {
		return "", errs.Usagef(`{"command": "go test ./..."}`, "run_command needs a command")
	}
	timeout := DefaultTimeout
	if a.TimeoutSeconds != 0 {
		if a.TimeoutSeconds < 0 || time.Duration(a.TimeoutSeconds)*time.Second > MaxTimeout {
			return "", errs.Usagef(fmt.Sprintf("timeout_seconds from 1 to %d", int(MaxTimeout.Seconds())), "bad timeout_seconds %d", a.TimeoutSeconds)
		}
		timeout = time.Duration(a.TimeoutSeconds) * time.Second
	}
	b, err := newConfinement(env)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A private TMPDIR: the only place outside the workspace a confined
	// command may write.
	tmp, err := os.MkdirTemp("", "pm-run-")
	if err != nil {
		return "", errs.Failf("", "run_command: %v", err)
	}
	defer os.RemoveAll(tmp)
	cmd := confinedCommand(cctx, env, b, a.Command, tmp)
	cmd.Dir = b.root
	cmd.Env = envlist.Set(secret.FilterEnv(os.Environ()), "TMPDIR", tmp)
	out := &render.HeadTail{Max: MaxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// On timeout kill the whole group (the leader is not reaped yet, so its
	// pid is still the group's id), and stop waiting for output a few seconds
	// later even if something outside the group holds the pipe.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	// The command's whole tree ends with it, setsid'ed children included
	// (a PID namespace of its own, or its marker: driver.StartTree).
	end, err := driver.StartTree(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	end()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	var head string
	var exitErr *exec.ExitError
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		head = fmt.Sprintf("timed out after %s: the command and everything it started were killed", timeout)
	case err == nil:
		head = "exit code 0"
	case errors.As(err, &exitErr):
		head = fmt.Sprintf("exit code %d", exitErr.ExitCode())
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			head = fmt.Sprintf("killed by signal %s", ws.Signal())
		}
	case errors.Is(err, exec.ErrWaitDelay):
		head = "exit code 0 (output cut off: a background process kept it open)"
	default:
		return "", errs.Failf("", "run_command: %v", err)
	}
	text := out.String()
	if text == "" {
		return head + "\n(no output)", nil
	}
	return head + "\n" + text, nil
}

// netPolicy is the network policy of the config (internal/netguard): what
// http_get may connect to.
func netPolicy(env *Env) (netguard.Policy, error) {
	if env.Store == nil {
		return netguard.Policy{}, nil
	}
	cfg := env.Store.Config().Sandbox
	p, err := netguard.Parse(cfg.HTTPAllow)
	if err != nil {
		return p, errs.Failf("pm config get sandbox.http_allow", "%v", err)
	}
	p.DenyAll = cfg.Network != nil && !*cfg.Network && !cfg.Off
	return p, nil
}

// httpGetArgs are http_get's arguments.
type httpGetArgs struct {
	URL string `json:"url" jsonschema:"the http:// or https:// URL"`
}

func httpGet(ctx context.Context, env *Env, a httpGetArgs) (string, error) {
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errs.Usagef(`{"url": "https://example.com/"}`, "%q is not an http or https URL", a.URL)
	}
	guard, err := netPolicy(env)
	if err != nil {
		return "", err
	}
	client := &http.Client{
		Timeout:   HTTPTimeout,
		Transport: httpguard.Transport(guard),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %s refused: http and https only", req.URL.Scheme)
			}
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", errs.Usagef("", "%v", err)
	}
	req.Header.Set("User-Agent", "pm-http_get")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", errs.Failf("check the URL", "GET %s: %v", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return "", errs.Failf("", "reading the body of %s: %v", u.Redacted(), err)
	}
	cut := len(body) > MaxBody
	if cut {
		body = body[:MaxBody]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "HTTP %s\nContent-Type: %s\n\n", resp.Status, resp.Header.Get("Content-Type"))
	if bytes.IndexByte(body, 0) >= 0 {
		fmt.Fprintf(&sb, "(binary body; not shown)")
		return sb.String(), nil
	}
	sb.WriteString(strings.ToValidUTF8(string(body), "\uFFFD"))
	if cut {
		fmt.Fprintf(&sb, "\n[cut: showed the first %d KiB of the body]", MaxBody>>10)
	}
	return sb.String(), nil
}
