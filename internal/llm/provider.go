package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/secret"
)

// DefaultBaseURL is the OpenAI endpoint used when no base URL is configured.
const DefaultBaseURL = "https://api.openai.com/v1"

// NoProviderMessage is the error text when nothing usable is configured.
const NoProviderMessage = "no model provider configured: set OPENAI_API_KEY " +
	"(and OPENAI_BASE_URL for a non-OpenAI endpoint such as Ollama http://localhost:11434/v1) and PM_MODEL"

// Provider is an OpenAI-compatible chat completions endpoint and the model to
// ask. APIKey may be empty for endpoints that need none (Ollama, llama.cpp).
// HTTPClient, when set, is used (its Transport wrapped, its Timeout ignored in
// favour of Loop.CallTimeout so streams are not cut by a client-wide limit).
type Provider struct {
	BaseURL    string
	APIKey     string
	Model      string
	HTTPClient *http.Client
}

// String shows the provider without its key.
func (p Provider) String() string {
	key := "none"
	if p.APIKey != "" {
		key = secret.Masked
	}
	return fmt.Sprintf("model %s at %s (key %s)", p.Model, p.baseURL(), key)
}

// GoString keeps %#v from printing the key.
func (p Provider) GoString() string { return "llm.Provider{" + p.String() + "}" }

func (p Provider) baseURL() string {
	if p.BaseURL == "" {
		return DefaultBaseURL
	}
	return p.BaseURL
}

// DefaultKeyEnv is the variable the key is read from when the config names
// none (model.api_key_env).
const DefaultKeyEnv = "OPENAI_API_KEY"

// ProviderFromEnv is ProviderFromEnvKey with the key in OPENAI_API_KEY.
func ProviderFromEnv(getenv func(string) string, cfgBaseURL, cfgModel, frontmatterModel string) (Provider, error) {
	return ProviderFromEnvKey(getenv, DefaultKeyEnv, cfgBaseURL, cfgModel, frontmatterModel)
}

// ProviderFromEnvKey resolves the provider. The model is the first non-empty
// of frontmatterModel, PM_MODEL and cfgModel; the base URL of OPENAI_BASE_URL
// and cfgBaseURL (else DefaultBaseURL); the key is the variable keyEnv
// names (model.api_key_env, which the config checks names a provider key;
// "" means OPENAI_API_KEY). A key is required only for the default OpenAI
// endpoint: an explicitly configured base URL (a local Ollama or llama.cpp)
// may need none. The error names exactly what to set.
func ProviderFromEnvKey(getenv func(string) string, keyEnv, cfgBaseURL, cfgModel, frontmatterModel string) (Provider, error) {
	if keyEnv == "" {
		keyEnv = DefaultKeyEnv
	}
	p := Provider{
		BaseURL: firstNonEmpty(getenv("OPENAI_BASE_URL"), cfgBaseURL),
		APIKey:  strings.TrimSpace(getenv(keyEnv)),
		Model:   firstNonEmpty(frontmatterModel, getenv("PM_MODEL"), cfgModel),
	}
	if p.BaseURL == "" && p.APIKey == "" {
		return Provider{}, fmt.Errorf("%s", strings.Replace(NoProviderMessage, DefaultKeyEnv, keyEnv, 1))
	}
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Provider{}, fmt.Errorf("invalid OPENAI_BASE_URL %q: want an http(s) URL such as http://localhost:11434/v1", p.BaseURL)
		}
		p.BaseURL = strings.TrimRight(p.BaseURL, "/")
		if p.APIKey == "" && isOpenAI(u) {
			return Provider{}, fmt.Errorf("no API key for %s: set %s", p.BaseURL, keyEnv)
		}
	}
	if p.Model == "" {
		return Provider{}, fmt.Errorf("no model configured: set PM_MODEL (or `model` in the prompt's frontmatter, or the model in config.json)")
	}
	return p, nil
}

func isOpenAI(u *url.URL) bool {
	host := u.Hostname()
	return host == "api.openai.com" || strings.HasSuffix(host, ".openai.com")
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// client builds the go-openai client for p, with a transport that records
// each response's status and headers into the sink carried by the request
// context (go-openai does not expose Retry-After).
func (p Provider) client() *openai.Client {
	cfg := openai.DefaultConfig(p.APIKey)
	cfg.BaseURL = p.baseURL()
	hc := &http.Client{}
	if p.HTTPClient != nil {
		c := *p.HTTPClient
		hc = &c
	}
	hc.Timeout = 0
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = headerCapture{base: base}
	cfg.HTTPClient = hc
	return openai.NewClientWithConfig(cfg)
}

// respInfo is where headerCapture leaves the last response's status and headers.
type respInfo struct {
	status int
	header http.Header
}

type respInfoKey struct{}

type headerCapture struct{ base http.RoundTripper }

func (t headerCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if resp != nil {
		if info, ok := req.Context().Value(respInfoKey{}).(*respInfo); ok {
			info.status, info.header = resp.StatusCode, resp.Header.Clone()
		}
	}
	return resp, err
}

func withRespInfo(ctx context.Context) (context.Context, *respInfo) {
	info := &respInfo{}
	return context.WithValue(ctx, respInfoKey{}, info), info
}
