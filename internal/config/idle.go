package config

import "time"

// DefaultIdleAfter is Runtime.IdleAfter when config.json does not set it.
const DefaultIdleAfter = 10 * time.Minute

// IdleAfterDuration is IdleAfter as a duration; 0 means never idle.
func (r Runtime) IdleAfterDuration() time.Duration {
	return durationOr(r.IdleAfter, DefaultIdleAfter)
}
