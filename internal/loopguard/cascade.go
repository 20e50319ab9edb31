package loopguard

// Cascade reports whether a call to `to`, made by the head of chain (the
// caller, then the one it answers, then that one's caller...: nearest
// first), comes back to an object already waiting in the chain (A → B →
// A): that object answers one request at a time, or not at all while it
// waits, so the call could never be answered. path is the loop for a
// person, "@A → @B → @A", from `to`'s place in the chain to the call.
func Cascade(chain []string, to string) (path string, hit bool) {
	at := -1
	for i, n := range chain {
		if n == to {
			at = i
			break
		}
	}
	if at < 0 {
		return "", false
	}
	path = "@" + to
	for i := 0; i <= at; i++ {
		path = "@" + chain[i] + " → " + path
	}
	return path, true
}
