package config

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
)

// ConfigKeyType is the Go type of a config key ("limits.active_tasks"); an
// unknown key is a usage error naming the nearest valid one.
func ConfigKeyType(key string) (reflect.Type, error) {
	t := reflect.TypeOf(Config{})
	prefix := ""
	for _, part := range strings.Split(key, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil, errs.Usagef("pm config list shows every key", "config key %q: %s has no keys under it", key, strings.TrimSuffix(prefix, "."))
		}
		fields := jsonFields(t)
		ft, ok := fields[part]
		if !ok {
			try := "pm config list shows every key"
			if near := nearest(part, fields, prefix); near != "" {
				try = "pm config get " + near
			}
			return nil, errs.Usagef(try, "unknown config key %q", prefix+part)
		}
		t, prefix = ft, prefix+part+"."
	}
	return t, nil
}

// ConfigValue reads one key of the effective config (defaults under the
// file) as a JSON-ready value.
func ConfigValue(cfg Config, key string) (any, error) {
	if _, err := ConfigKeyType(key); err != nil {
		return nil, err
	}
	tree, err := toTree(cfg)
	if err != nil {
		return nil, err
	}
	var cur any = tree
	for _, part := range strings.Split(key, ".") {
		m, _ := cur.(map[string]any)
		cur = m[part] // a key left out (omitempty) reads as null
	}
	return cur, nil
}

// ConfigLeaves flattens cfg into key → value, every leaf key once.
func ConfigLeaves(cfg Config) (map[string]any, error) {
	tree, err := toTree(cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				walk(prefix+k+".", x)
			}
			return
		}
		out[strings.TrimSuffix(prefix, ".")] = v
	}
	walk("", tree)
	return out, nil
}

func toTree(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	return tree, json.Unmarshal(data, &tree)
}

// ParseConfigValue turns a command-line value into the key's type: JSON
// (5, true, ["sh","agent.sh"]) or, for a text key, the text itself.
func ParseConfigValue(key, text string) (any, error) {
	t, err := ConfigKeyType(key)
	if err != nil {
		return nil, err
	}
	p := reflect.New(t)
	if err := json.Unmarshal([]byte(text), p.Interface()); err == nil {
		var v any
		_ = json.Unmarshal([]byte(text), &v)
		return v, nil
	}
	if t.Kind() == reflect.String {
		return text, nil
	}
	return nil, errs.Usagef(example(t), "config key %q wants %s, not %q", key, kindName(t), text)
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return kindName(t.Elem())
	case reflect.Slice:
		return "a JSON list"
	case reflect.Struct:
		return "a JSON object"
	}
	return t.Kind().String()
}

func example(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "a number, e.g. pm config set limits.active_tasks 5"
	case reflect.Bool, reflect.Pointer:
		return "true or false, e.g. pm config set sandbox.off false"
	case reflect.Slice:
		return `a JSON list, e.g. pm config set runtime.exec.command '["sh","agent.sh"]'`
	}
	return "pm config list shows every key with its value"
}

// SetConfigKey sets key to v in a config tree, creating the objects on the way.
func SetConfigKey(tree map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := tree[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			tree[p] = next
		}
		tree = next
	}
	tree[parts[len(parts)-1]] = v
}

// UnsetConfigKey removes key from a config tree (the default applies
// again); it reports whether the key was there.
func UnsetConfigKey(tree map[string]any, key string) bool {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := tree[p].(map[string]any)
		if !ok {
			return false
		}
		tree = next
	}
	_, ok := tree[parts[len(parts)-1]]
	delete(tree, parts[len(parts)-1])
	return ok
}
