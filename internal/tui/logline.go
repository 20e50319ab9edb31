package tui

import "github.com/plasmodium/pm/internal/msglog"

// LogLine is one line of the message log (internal/msglog builds it for
// every seat, the dashboard too).
type LogLine = msglog.Line

// cascade indents each call under the call that caused it (internal/msglog).
type cascade = msglog.Cascade

func newCascade() *cascade { return msglog.NewCascade() }
