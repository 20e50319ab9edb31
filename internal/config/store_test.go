package config_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
)

// The store section loads whole and well-formed, or is refused naming the
// key and with a Try line; nothing about it is guessed.
func TestStoreConfig(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		key, try   string // empty key: it loads
	}{
		{"local", `{}`, "", ""},
		{"hub", `{"store": {"url": "nats://127.0.0.1:4222", "project": "web-1"}}`, "", ""},
		{"cluster", `{"store": {"url": "nats://a:4222, nats://b:4222,tls://c:4222", "project": "p"}}`, "", ""},
		{"no port", `{"store": {"url": "nats://hub.example", "project": "p"}}`, "", ""},
		{"user", `{"store": {"url": "nats://a:4222", "project": "p", "user": "pm", "password_env": "HUB_PASSWORD"}}`, "", ""},
		{"tls", `{"store": {"url": "tls://a:4222", "project": "p", "tls": {"ca": "/ca.pem", "cert": "/c.pem", "key": "/c.key"}}}`, "", ""},
		{"creds", `{"store": {"url": "nats://a:4222", "project": "p", "creds": "/x.creds"}}`, "", ""},
		{"keys without url", `{"store": {"project": "p"}}`, "url", "pm config unset store"},
		{"http", `{"store": {"url": "http://a:4222", "project": "p"}}`, "url", "nats://HOST:4222"},
		{"bare host", `{"store": {"url": "a:4222", "project": "p"}}`, "url", "nats://HOST:4222"},
		{"password in url", `{"store": {"url": "nats://pm:s3cret@a:4222", "project": "p"}}`, "url", "nats://HOST:4222"},
		{"path", `{"store": {"url": "nats://a:4222/x", "project": "p"}}`, "url", "nats://HOST:4222"},
		{"no project", `{"store": {"url": "nats://a:4222"}}`, "project", "store.project"},
		{"project upper", `{"store": {"url": "nats://a:4222", "project": "Web"}}`, "project", "store.project"},
		{"project dash first", `{"store": {"url": "nats://a:4222", "project": "-a"}}`, "project", "store.project"},
		{"project too long", `{"store": {"url": "nats://a:4222", "project": "` + strings.Repeat("a", 49) + `"}}`, "project", "store.project"},
		{"project underscore", `{"store": {"url": "nats://a:4222", "project": "a_locks"}}`, "project", "store.project"},
		{"two credentials", `{"store": {"url": "nats://a:4222", "project": "p", "creds": "/x.creds", "user": "u"}}`, "creds", "keep one"},
		{"password env alone", `{"store": {"url": "nats://a:4222", "project": "p", "password_env": "NATS_PASSWORD"}}`, "password_env", "store.user"},
		{"password env lower", `{"store": {"url": "nats://a:4222", "project": "p", "user": "u", "password_env": "hub_PASSWORD"}}`, "password_env", "NATS_PASSWORD"},
		{"password env any var", `{"store": {"url": "nats://a:4222", "project": "p", "user": "u", "password_env": "OPENAI_API_KEY"}}`, "password_env", "NATS_PASSWORD"},
		{"lease seconds", `{"store": {"url": "nats://a:4222", "project": "p", "lease_seconds": 2}}`, "", ""},
		{"negative lease seconds", `{"store": {"url": "nats://a:4222", "project": "p", "lease_seconds": -1}}`, "lease_seconds", "store.lease_seconds 5"},
		{"cert without key", `{"store": {"url": "nats://a:4222", "project": "p", "tls": {"cert": "/c.pem"}}}`, "tls", "store.tls.key"},
		{"relative ca", `{"store": {"url": "nats://a:4222", "project": "p", "tls": {"ca": "ca.pem"}}}`, "tls.ca", "/absolute/path"},
		{"relative creds", `{"store": {"url": "nats://a:4222", "project": "p", "creds": "x.creds"}}`, "creds", "/absolute/path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, filepath.Join(t.TempDir(), "p"), tt.body)
			cfg, err := config.LoadConfig(path)
			if tt.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *config.StoreError
			if !errors.As(err, &se) || se.Key != tt.key {
				t.Fatalf("LoadConfig = %v (%+v); want a StoreError on store.%s", err, cfg.Store, tt.key)
			}
			if try := config.ConfigTry(err, path); !strings.Contains(try, tt.try) {
				t.Errorf("Try = %q, want %q in it", try, tt.try)
			}
		})
	}
}

func TestStoreURLs(t *testing.T) {
	s := config.Store{URL: " nats://a:4222 ,nats://b:4222,"}
	if got := strings.Join(s.URLs(), "|"); got != "nats://a:4222|nats://b:4222" {
		t.Fatalf("URLs = %q", got)
	}
	if s.PasswordVar() != config.DefaultPasswordEnv {
		t.Fatalf("PasswordVar = %q", s.PasswordVar())
	}
}
