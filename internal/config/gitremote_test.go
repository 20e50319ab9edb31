package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
)

// git.remote names a git remote (or "none"); anything git would read as an
// option or a path is refused with the key named.
func TestGitRemote(t *testing.T) {
	for _, c := range []struct {
		body, want, err string
	}{
		{`{}`, "origin", ""},
		{`{"git": {"remote": "upstream"}}`, "upstream", ""},
		{`{"git": {"remote": "my-fork_2.x"}}`, "my-fork_2.x", ""},
		{`{"git": {"remote": "none"}}`, "", ""},
		{`{"git": {"remote": "--upload-pack=touch x"}}`, "", "git.remote is"},
		{`{"git": {"remote": "../elsewhere"}}`, "", "git.remote is"},
		{`{"git": {"remote": "a/b"}}`, "", "git.remote is"},
		{`{"git": {"remote": ".hidden"}}`, "", "git.remote is"},
	} {
		cfg, err := config.Parse("config.json", []byte(c.body))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err %v, want %q", c.body, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.body, err)
		case c.err == "" && cfg.GitRemote() != c.want:
			t.Errorf("%s: GitRemote() = %q, want %q", c.body, cfg.GitRemote(), c.want)
		}
	}
}

// git.remote_timeout is a duration from 1s to 10m, 20s when unset; else
// the key is named in the error.
func TestGitRemoteTimeout(t *testing.T) {
	for _, c := range []struct {
		body string
		want time.Duration
		err  string
	}{
		{`{}`, 20 * time.Second, ""},
		{`{"git": {"remote_timeout": "5s"}}`, 5 * time.Second, ""},
		{`{"git": {"remote_timeout": "10m"}}`, 10 * time.Minute, ""},
		{`{"git": {"remote_timeout": "0"}}`, 0, "git.remote_timeout is"},
		{`{"git": {"remote_timeout": "500ms"}}`, 0, "git.remote_timeout is"},
		{`{"git": {"remote_timeout": "1h"}}`, 0, "git.remote_timeout is"},
		{`{"git": {"remote_timeout": "soon"}}`, 0, "git.remote_timeout is"},
	} {
		cfg, err := config.Parse("config.json", []byte(c.body))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err %v, want %q", c.body, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.body, err)
		case c.err == "" && cfg.GitRemoteTimeout() != c.want:
			t.Errorf("%s: GitRemoteTimeout() = %v, want %v", c.body, cfg.GitRemoteTimeout(), c.want)
		}
	}
}
