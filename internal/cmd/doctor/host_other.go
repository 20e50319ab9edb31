//go:build !linux

package doctor

import (
	"os"
	"runtime"
	"strconv"
)

// asHost: nothing to probe off Linux.
func asHost() {}

func kernel() string { return runtime.GOOS }

func whoami() string { return strconv.Itoa(os.Getuid()) }
