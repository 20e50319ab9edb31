package natsstate

// OnWatchMade has f called each time WatchWorkers' watch is made, until
// the returned restore.
func OnWatchMade(f func()) (restore func()) {
	old := watchMade
	watchMade = f
	return func() { watchMade = old }
}
