package loadgen

import "time"

// inflightBucket is the width of the buckets in which inflight counts the
// requests in flight by start: the precision of the oldest one's age.
const inflightBucket = 10 * time.Millisecond

// inflight counts the requests in flight, by when their latency started
// (their intended time; the send time in the closed model and a tape's
// load) in buckets of inflightBucket, so that the age of the oldest is
// known while it is still in flight: a stall shows as it happens, before
// any answer puts it in a histogram. Its owner's lock guards it.
type inflight struct {
	n       int64
	buckets map[int64]int64 // start / inflightBucket -> requests in flight
}

// add counts k requests started at start in flight (k < 0: no longer).
func (f *inflight) add(start time.Time, k int64) {
	f.n += k
	b := start.UnixNano() / int64(inflightBucket)
	if f.buckets == nil {
		f.buckets = make(map[int64]int64)
	}
	if n := f.buckets[b] + k; n > 0 {
		f.buckets[b] = n
	} else {
		delete(f.buckets, b)
	}
}

// oldest returns the age at now of the oldest request in flight, to the
// bucket's start; 0 when none is. It visits every bucket (at most the
// timeout over inflightBucket): for live figures, not per request.
func (f *inflight) oldest(now time.Time) time.Duration {
	first, found := int64(0), false
	for b := range f.buckets {
		if !found || b < first {
			first, found = b, true
		}
	}
	if !found {
		return 0
	}
	return max(now.Sub(time.Unix(0, first*int64(inflightBucket))), 0)
}
