package lease

import "time"

// SetBeforeCommit sets the hook between an atomic batch's first message
// and its commit (nil: none).
func SetBeforeCommit(fn func()) { beforeCommit = fn }

// SetWaitRideOut sets the part of WaitFree's bound that rides out an
// election, for the test's life.
func SetWaitRideOut(t interface{ Cleanup(func()) }, d time.Duration) {
	old := waitRideOut
	waitRideOut = d
	t.Cleanup(func() { waitRideOut = old })
}
