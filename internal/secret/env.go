package secret

import "strings"

// MinLen is the shortest value a Set masks (Maskable): shorter values of
// secret-looking variables (KEYBOARD=us), and dummy keys ("x"), would mask
// ordinary words.
const MinLen = 8

// secretWords mark a variable name as secret wherever they appear in it.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL"}

// ProviderVars are the model provider variables pm knows. They are secret
// whatever the words above say.
var ProviderVars = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY"}

// IsSecretEnv reports whether the environment variable name holds a secret.
// It is the one rule for which variables are secret.
func IsSecretEnv(name string) bool {
	name = strings.ToUpper(name)
	for _, p := range ProviderVars {
		if name == p {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// FilterEnv returns environ ("NAME=value" entries) without the secret
// variables.
func FilterEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !IsSecretEnv(name) {
			out = append(out, kv)
		}
	}
	return out
}

// FromEnv returns the Set of the values of the secret variables in environ
// that are Maskable.
func FromEnv(environ []string) Set {
	var vals []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if ok && IsSecretEnv(name) && Maskable(strings.TrimSpace(val)) {
			vals = append(vals, val)
			// ProviderFromEnv trims the key it uses; mask that form too.
			if t := strings.TrimSpace(val); t != val {
				vals = append(vals, t)
			}
		}
	}
	return New(vals...)
}
