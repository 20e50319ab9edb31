package crashpoint

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

var (
	hits  atomic.Int64
	once  sync.Once
	atN   int64  // crash at this hit number (0: never)
	atTag string // or at the first hit of this name
	trace bool
	hook  atomic.Pointer[func(name string)]
)

func load() {
	v := os.Getenv("PM_TEST_CRASH_AT")
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		atN = n
	} else {
		atTag = v
	}
	trace = os.Getenv("PM_TEST_CRASH_TRACE") == "1"
}

// Hit marks a point between two durable steps; name says which.
func Hit(name string) {
	n := hits.Add(1)
	if h := hook.Load(); h != nil {
		(*h)(name)
	}
	once.Do(load)
	if trace {
		fmt.Fprintf(os.Stderr, "crashpoint %d %s\n", n, name)
	}
	if (atN > 0 && n == atN) || (atTag != "" && name == atTag) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way; run nothing more
	}
}

// SetHook runs fn at every hit until the returned function removes it.
// In-process tests only.
func SetHook(fn func(name string)) (remove func()) {
	hook.Store(&fn)
	return func() { hook.Store(nil) }
}
