package testenv

import "time"

// NextCreationSecond returns once the wall clock has passed into the next second, so
// that an object created after it is younger, by creationTimestamp, than every object
// created before the call. The API server stamps creation times to the second and
// orders claims by them; on one machine the server's clock is this one, so waiting out
// the rest of the current second (a little over, for the server's own read of the
// clock) is enough, and is the one wait the API forces on tests of who is older.
func NextCreationSecond() {
	now := time.Now()
	next := now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond)
	time.Sleep(next.Sub(now)) // the API's one-second resolution leaves nothing to poll
}
