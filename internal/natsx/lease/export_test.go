package lease

// SetBeforeCommit sets the hook between an atomic batch's first message
// and its commit (nil: none).
func SetBeforeCommit(fn func()) { beforeCommit = fn }
