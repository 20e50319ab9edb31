//go:build !unix

package lockedfile

import "os"

func readFile(path string, _ []byte) ([]byte, error) { return os.ReadFile(path) }
