package cost

import (
	"fmt"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	// Model is the name the price is for ("gpt-4o"); in config.json's
	// prices list it is the model name as the provider takes it.
	Model string `json:"model"`
	// Input is an uncached prompt token.
	Input float64 `json:"input"`
	// CachedInput is a prompt token read from the provider's cache
	// (OpenAI's cached_tokens, Anthropic's cache_read_input_tokens); 0:
	// the Input price.
	CachedInput float64 `json:"cached_input,omitempty"`
	// CacheWrite is a prompt token written to the cache (Anthropic's
	// cache_creation_input_tokens); 0: the Input price.
	CacheWrite float64 `json:"cache_write,omitempty"`
	// Output is a completion token (reasoning tokens included).
	Output float64 `json:"output"`
}

// Check reports a price that cannot be right: no model, or a negative rate.
func (p Price) Check() error {
	if strings.TrimSpace(p.Model) == "" {
		return fmt.Errorf("a price without a model name")
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"cache_write", p.CacheWrite}, {"output", p.Output}} {
		if r.v < 0 {
			return fmt.Errorf("price of %s: %s is %g; it must be 0 or more", p.Model, r.name, r.v)
		}
	}
	return nil
}

// Table is the shipped price table, in dollars per million tokens, from the
// vendors' public pricing pages as of 2025-11 (platform.openai.com/docs/pricing,
// docs.anthropic.com/en/docs/about-claude/pricing, ai.google.dev/gemini-api/docs/pricing;
// Gemini's Pro prices are for prompts up to 200k tokens; Anthropic's cache
// write is the 5-minute cache's). Prices change: config.json's prices win.
var Table = []Price{
	// OpenAI
	{Model: "gpt-5", Input: 1.25, CachedInput: 0.125, Output: 10},
	{Model: "gpt-5-mini", Input: 0.25, CachedInput: 0.025, Output: 2},
	{Model: "gpt-5-nano", Input: 0.05, CachedInput: 0.005, Output: 0.40},
	{Model: "gpt-4.1", Input: 2, CachedInput: 0.50, Output: 8},
	{Model: "gpt-4.1-mini", Input: 0.40, CachedInput: 0.10, Output: 1.60},
	{Model: "gpt-4.1-nano", Input: 0.10, CachedInput: 0.025, Output: 0.40},
	{Model: "gpt-4o", Input: 2.50, CachedInput: 1.25, Output: 10},
	{Model: "gpt-4o-mini", Input: 0.15, CachedInput: 0.075, Output: 0.60},
	{Model: "o3", Input: 2, CachedInput: 0.50, Output: 8},
	{Model: "o4-mini", Input: 1.10, CachedInput: 0.275, Output: 4.40},
	{Model: "o3-mini", Input: 1.10, CachedInput: 0.55, Output: 4.40},
	// Anthropic
	{Model: "claude-opus-4-5", Input: 5, CachedInput: 0.50, CacheWrite: 6.25, Output: 25},
	{Model: "claude-opus-4-1", Input: 15, CachedInput: 1.50, CacheWrite: 18.75, Output: 75},
	{Model: "claude-opus-4", Input: 15, CachedInput: 1.50, CacheWrite: 18.75, Output: 75},
	{Model: "claude-sonnet-4-5", Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15},
	{Model: "claude-sonnet-4", Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15},
	{Model: "claude-3-7-sonnet", Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15},
	{Model: "claude-3-5-sonnet", Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15},
	{Model: "claude-haiku-4-5", Input: 1, CachedInput: 0.10, CacheWrite: 1.25, Output: 5},
	{Model: "claude-3-5-haiku", Input: 0.80, CachedInput: 0.08, CacheWrite: 1, Output: 4},
	// Google
	{Model: "gemini-2.5-pro", Input: 1.25, CachedInput: 0.31, Output: 10},
	{Model: "gemini-2.5-flash", Input: 0.30, CachedInput: 0.075, Output: 2.50},
	{Model: "gemini-2.5-flash-lite", Input: 0.10, CachedInput: 0.025, Output: 0.40},
	{Model: "gemini-2.0-flash", Input: 0.10, CachedInput: 0.025, Output: 0.40},
}

// sameModel reports whether rest, what follows a table name in a model
// name, keeps its price: a release date (-2024-08-06, -20250514), -latest,
// a version (-001), then Vertex's @date. (No regexp: the store links this
// package, and pm's start-up must stay cheap.)
func sameModel(rest string) bool {
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		if i == len(rest)-1 || strings.Trim(rest[i+1:], "0123456789abcdefghijklmnopqrstuvwxyz-") != "" {
			return false
		}
		rest = rest[:i]
	}
	if rest == "" || rest == "-latest" {
		return true
	}
	digits := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	switch {
	case len(rest) == 11 && rest[0] == '-' && rest[5] == '-' && rest[8] == '-': // -YYYY-MM-DD
		return digits(rest[1:5]) && digits(rest[6:8]) && digits(rest[9:])
	case len(rest) == 9 || len(rest) == 4: // -YYYYMMDD, -001
		return rest[0] == '-' && digits(rest[1:])
	}
	return false
}

// Normalize is the name looked up: lower case, without a provider prefix
// ("openai/gpt-4o", "models/gemini-2.5-pro").
func Normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// Lookup finds model's price: in overrides first (config.json), then in
// Table. ok is false for a model neither knows.
func Lookup(model string, overrides []Price) (p Price, ok bool) {
	if p, ok := lookupIn(model, overrides); ok {
		return p, true
	}
	return lookupIn(model, Table)
}

// lookupIn matches an exact name first, then the longest table name the
// model name extends with an allowed suffix.
func lookupIn(model string, table []Price) (Price, bool) {
	m := Normalize(model)
	if m == "" {
		return Price{}, false
	}
	best := -1
	for i, p := range table {
		name := Normalize(p.Model)
		if name == m {
			return p, true
		}
		if strings.HasPrefix(m, name) && sameModel(m[len(name):]) &&
			(best < 0 || len(name) > len(Normalize(table[best].Model))) {
			best = i
		}
	}
	if best < 0 {
		return Price{}, false
	}
	return table[best], true
}
