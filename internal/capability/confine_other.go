//go:build !linux

package capability

import "os"

// location falls back to the name the file was opened by: os.Root still
// keeps the open inside the workspace, but the state directory check is by
// name only on these systems.
func location(f *os.File) (string, error) { return f.Name(), nil }
