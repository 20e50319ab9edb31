//go:build !unix

package store

import "path/filepath"

// countTaskIDs counts the entries of dir named like a task id.
func countTaskIDs(dir string) (int, error) {
	n := 0
	_, err := indexNames(filepath.Clean(dir), &n)
	return n, err
}
