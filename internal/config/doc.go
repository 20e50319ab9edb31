// Package config is .plasmodium/config.json: its types (Config and its
// parts), its defaults (DefaultConfig, the agent CLI presets), its loading
// (LoadConfig, Parse: unknown keys refused with the nearest known one,
// values validated), the keys pm config edits (ConfigKeyType, ConfigValue,
// SetConfigKey, …) and the trust rules for keys that route a secret or run a
// command (configtrust.go).
//
// Invariants:
//   - A Config that Parse or LoadConfig returns without error has passed
//     every check: known keys, valid values, trusted routing keys, a
//     provider-shaped api_key_env. Nothing else builds a Config from bytes.
//   - Loading reads the defaults first, so a file that names some keys keeps
//     the defaults for the rest; a missing file is the defaults.
//   - The package holds no state and no cache: the store opens config.json
//     for a session (store.Open, Store.Config, Store.UpdateConfig under
//     config.json.lock) and keeps config.checked, its parse cache.
package config
