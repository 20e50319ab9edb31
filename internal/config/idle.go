package config

import "time"

// DefaultIdleAfter is Runtime.IdleAfter when config.json does not set it.
const DefaultIdleAfter = 10 * time.Minute

// IdleAfterDuration is IdleAfter as a duration; 0 means never idle.
func (r Runtime) IdleAfterDuration() time.Duration {
	if r.IdleAfter == "" {
		return DefaultIdleAfter
	}
	d, err := time.ParseDuration(r.IdleAfter)
	if err != nil || d < 0 {
		return DefaultIdleAfter // validate refuses it at load
	}
	return d
}
