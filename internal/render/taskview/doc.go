// Package taskview prints a task's state for people: pm status (one line
// per task, or one task in detail) and what pm done did.
//
// It is apart from render because it needs package task (health, views,
// pm done's result), which links the git and agent code: render stays small
// enough for pm's short-command executable (internal/lite), which prints
// rooms. Agent-written text goes through render.Line like everywhere else.
package taskview
