package driver

// fdDir lists this process's open descriptors.
const fdDir = "/dev/fd"

// closeRangeCloexec: macOS has no close_range; NoInherit flags each
// descriptor of fdDir in turn.
func closeRangeCloexec() bool { return false }
