package ops

import (
	"context"
	"sort"
	"strings"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// ConfigEntry is one config key with its effective value (the default when
// config.json does not set it).
type ConfigEntry struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// ConfigGetInput is pm config get.
type ConfigGetInput struct {
	Key string `json:"key" jsonschema:"a config key, e.g. limits.active_tasks"`
}

// ConfigGet reads one key of the effective config.
func ConfigGet(ctx context.Context, sess *Session, in ConfigGetInput) (ConfigEntry, error) {
	cfg, err := loadedConfig(sess)
	if err != nil {
		return ConfigEntry{}, err
	}
	v, err := config.ConfigValue(cfg, in.Key)
	return ConfigEntry{Key: in.Key, Value: v}, err
}

// ConfigList lists every key of the effective config, sorted.
func ConfigList(ctx context.Context, sess *Session) ([]ConfigEntry, error) {
	cfg, err := loadedConfig(sess)
	if err != nil {
		return nil, err
	}
	leaves, err := config.ConfigLeaves(cfg)
	if err != nil {
		return nil, err
	}
	out := make([]ConfigEntry, 0, len(leaves))
	for k, v := range leaves {
		out = append(out, ConfigEntry{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// ConfigSetInput is pm config set.
type ConfigSetInput struct {
	Key   string `json:"key" jsonschema:"a config key, e.g. limits.active_tasks"`
	Value string `json:"value" jsonschema:"JSON (5, true, [\"sh\",\"agent.sh\"]) or, for a text key, the text"`
}

// ConfigSet sets one key in config.json after checking the key, the value's
// type and the resulting config (humans only).
func ConfigSet(ctx context.Context, sess *Session, in ConfigSetInput) (ConfigEntry, error) {
	if err := checkConfigEditor(sess.Actor); err != nil {
		return ConfigEntry{}, err
	}
	v, err := config.ParseConfigValue(in.Key, in.Value)
	if err != nil {
		return ConfigEntry{}, err
	}
	cfg, err := sess.Store.UpdateConfig(func(tree map[string]any) error {
		config.SetConfigKey(tree, in.Key, v)
		return nil
	})
	if err != nil {
		return ConfigEntry{}, err
	}
	if strings.HasPrefix(in.Key, "notify.") {
		notifyFromNow(sess.Store)
	}
	got, err := config.ConfigValue(cfg, in.Key)
	return ConfigEntry{Key: in.Key, Value: got}, err
}

// ConfigUnsetInput is pm config unset.
type ConfigUnsetInput struct {
	Key string `json:"key" jsonschema:"the key to remove from config.json, e.g. runtime.exec.commandd"`
}

// ConfigUnset removes a key from config.json, so its default applies again;
// a misspelt key can be removed this way too (humans only).
func ConfigUnset(ctx context.Context, sess *Session, in ConfigUnsetInput) (ConfigEntry, error) {
	if err := checkConfigEditor(sess.Actor); err != nil {
		return ConfigEntry{}, err
	}
	found := false
	cfg, err := sess.Store.UpdateConfig(func(tree map[string]any) error {
		if found = config.UnsetConfigKey(tree, in.Key); !found {
			return errs.NotFoundf("pm config list shows every key config.json can set", "config.json does not set %q", in.Key)
		}
		return nil
	})
	if err != nil {
		return ConfigEntry{}, err
	}
	got, _ := config.ConfigValue(cfg, in.Key) // the key may be a misspelling: no value then
	return ConfigEntry{Key: in.Key, Value: got}, nil
}

func loadedConfig(sess *Session) (config.Config, error) {
	if sess.Store.BadConfig != nil {
		return config.Config{}, sess.Store.BadConfig
	}
	return *sess.Store.Config(), nil
}

// checkConfigEditor: config.json sets agents' limits and budgets, so agents
// may read it but only the human changes it.
func checkConfigEditor(a store.Actor) error {
	if a.IsHuman() {
		return nil
	}
	return errs.Statef("ask the human to change it", "agents may not change config.json")
}

// notifyFromNow moves the notifier's cursor to the bus's end: turning
// notifications on (or changing them) does not replay the past.
func notifyFromNow(s *store.Store) {
	_, end, err := s.Bus().Tail(0)
	if err == nil {
		err = s.SetNotifyCursor(end)
	}
	if err != nil {
		s.Warnf("notifications may repeat past events: %v", err)
	}
}
