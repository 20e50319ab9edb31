package llm

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// RetryPolicy governs retries of one model call. Zero fields take defaults.
type RetryPolicy struct {
	MaxAttempts int           // attempts in all, including the first (default 5)
	BaseDelay   time.Duration // first backoff (default 1s), doubled each attempt
	MaxDelay    time.Duration // cap on any one wait, Retry-After included (default 60s)
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = time.Minute
	}
	return p
}

// backoff is the wait before attempt+1 (attempt counts from 1): the server's
// Retry-After when it sent one, else BaseDelay·2^(attempt-1) with jitter in
// [½, 1) of that; both capped at MaxDelay.
func (p RetryPolicy) backoff(attempt int, info *respInfo) time.Duration {
	if d, ok := retryAfter(info); ok {
		return min(d, p.MaxDelay)
	}
	d := p.BaseDelay << min(attempt-1, 30)
	if d <= 0 || d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// retryAfter reads retry-after-ms, then Retry-After (seconds or HTTP date).
func retryAfter(info *respInfo) (time.Duration, bool) {
	if info == nil || info.header == nil {
		return 0, false
	}
	if ms, err := strconv.ParseFloat(info.header.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	v := info.header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// errTruncated is a stream that ended without a finish_reason: go-openai
// reports a body closed without [DONE] as a plain io.EOF.
var errTruncated = errors.New("stream ended without a finish_reason (truncated)")

// statusOf returns the HTTP status of a go-openai error, 0 when there is none
// (network errors, errors in the middle of a stream).
func statusOf(err error) int {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// retryable reports whether a failed attempt may be retried. ctx is the
// caller's context: once it is done nothing is retried. 408, 409, 429 and 5xx
// are retried; any other HTTP status fails fast; errors without a status
// (network, truncated stream, per-call timeout) are retried.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var be *BudgetError
	if errors.As(err, &be) {
		return false
	}
	switch s := statusOf(err); {
	case s == 0:
		return true
	case s == http.StatusRequestTimeout, s == http.StatusConflict, s == http.StatusTooManyRequests, s >= 500:
		return true
	default:
		return false
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
