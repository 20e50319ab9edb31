package errs

import (
	"errors"
	"fmt"
)

// Code is a process exit code. The values are part of the CLI contract (SPEC.md).
type Code int

const (
	OK       Code = 0
	Failure  Code = 1
	Usage    Code = 2
	Limit    Code = 3
	NotFound Code = 4
	State    Code = 5
	Timeout  Code = 124
)

// Error is an error that knows its exit code and, where one helps, what to try next.
type Error struct {
	Code Code
	Msg  string
	Try  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

func newf(code Code, try string, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Try: try}
}

// Limitf reports a circuit breaker refusing an operation (exit 3).
func Limitf(try, format string, args ...any) error { return newf(Limit, try, format, args...) }

// NotFoundf reports an unknown id or name (exit 4).
func NotFoundf(try, format string, args ...any) error { return newf(NotFound, try, format, args...) }

// Statef reports an operation that the current state does not allow (exit 5).
func Statef(try, format string, args ...any) error { return newf(State, try, format, args...) }

// Usagef reports bad arguments (exit 2).
func Usagef(try, format string, args ...any) error { return newf(Usage, try, format, args...) }

// Timeoutf reports a wait that ran out of time (exit 124).
func Timeoutf(try, format string, args ...any) error { return newf(Timeout, try, format, args...) }

// Failf reports any other failure (exit 1).
func Failf(try, format string, args ...any) error { return newf(Failure, try, format, args...) }

// CodeOf maps any error to its exit code; errors that carry no code are failures.
func CodeOf(err error) Code {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}

// TryOf returns the hint of the outermost coded error, if any.
func TryOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Try
	}
	return ""
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }
