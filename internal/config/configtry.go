package config

import "errors"

// ConfigTry is what to do about a config.json that does not load.
func ConfigTry(err error, path string) string {
	var ke *KeyError
	var tried interface {
		error
		Try() string
	} // TrustError, KeyEnvError
	switch {
	case errors.As(err, &tried):
		return tried.Try()
	case errors.As(err, &ke) && ke.Near != "":
		return "pm config unset " + ke.Key + ", then pm config set " + ke.Near + " VALUE"
	case errors.As(err, &ke):
		return "pm config unset " + ke.Key
	}
	return "fix or delete " + path + " (pm init rewrites defaults; pm config list shows the keys)"
}
