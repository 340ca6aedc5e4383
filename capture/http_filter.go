package capture

// What the HTTP proxy records: a share of sessions (WithSample) and the
// messages of some methods (WithMethodFilter). Unrecorded traffic is still
// forwarded byte for byte; it only stays out of the tape.

import (
	"fmt"
	"math"
	"regexp"
	"sync"

	"github.com/mcptape/mcptape/internal/glob"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// maxDroppedRequests bounds the requests a method filter remembers so as
// to drop their responses too; past it a response of a dropped request is
// recorded (the proxy never holds unbounded state for a filter).
const maxDroppedRequests = 1 << 16

// WithSample records a share f (0 to 1) of sessions, whole: every record
// of a session, its open and close events included, or none. The choice
// is made from the session id and seed alone, so it is the same for a
// session whatever the order of the traffic, and the same across runs
// with the same seed. Records of no session (none is known yet) are kept.
func WithSample(f float64, seed uint64) HTTPOption {
	return func(o *httpOptions) error {
		if math.IsNaN(f) || f < 0 || f > 1 {
			return fmt.Errorf("sample %v: want a share from 0 to 1", f)
		}
		o.sample, o.seed, o.sampling = f, seed, f < 1
		return nil
	}
}

// WithMethodFilter keeps in the tape only the messages whose method
// matches one of recordOnly (when any is given) and none of skip; the
// patterns are globs ("*" matches slashes too, "?" one character,
// "[...]" a class). A response is kept or dropped with its request.
// Events, session open and close among them, are always kept.
func WithMethodFilter(recordOnly, skip []string) HTTPOption {
	return func(o *httpOptions) error {
		compile := func(what string, pats []string) ([]*regexp.Regexp, error) {
			var out []*regexp.Regexp
			for _, p := range pats {
				re, err := glob.Regexp(p)
				if err != nil {
					return nil, fmt.Errorf("%s %q: %w", what, p, err)
				}
				out = append(out, re)
			}
			return out, nil
		}
		var err error
		if o.recordOnly, err = compile("record-only", recordOnly); err != nil {
			return err
		}
		o.skip, err = compile("skip", skip)
		return err
	}
}

// recordFilter decides which records reach the tape.
type recordFilter struct {
	sampling  bool
	threshold uint64 // a session is sampled when its hash is below (all when sample is 1)
	seed      uint64
	only      []*regexp.Regexp
	skip      []*regexp.Regexp

	mu      sync.Mutex
	dropped map[droppedKey]struct{} // requests dropped by method: their responses go too
}

// droppedKey names a request: its session, the direction it went and its
// raw id.
type droppedKey struct {
	session string
	dir     tape.Direction
	id      string
}

// newRecordFilter returns the filter o asks for, or nil when every record
// is kept.
func newRecordFilter(o *httpOptions) *recordFilter {
	if !o.sampling && len(o.recordOnly) == 0 && len(o.skip) == 0 {
		return nil
	}
	f := &recordFilter{sampling: o.sampling, seed: o.seed, only: o.recordOnly, skip: o.skip,
		dropped: make(map[droppedKey]struct{})}
	if o.sampling {
		f.threshold = sampleThreshold(o.sample)
	}
	return f
}

// sampleThreshold is the hash bound below which a session is in a sample
// of share f < 1: f of the 2^64 hash values.
func sampleThreshold(f float64) uint64 {
	t := uint64(f * (1 << 64)) // 0 for 0; f < 1 keeps it below 2^64
	if f > 0 && t == 0 {
		t = 1
	}
	return t
}

// Sampled reports whether WithSample(f, seed) records session id.
func Sampled(id string, f float64, seed uint64) bool {
	return f >= 1 || sessionHash(id, seed) < sampleThreshold(f)
}

// sessionSampled reports whether session id is in the sample.
func (f *recordFilter) sessionSampled(id string) bool {
	return !f.sampling || sessionHash(id, f.seed) < f.threshold
}

// sessionHash is FNV-1a of id, seeded, then mixed (splitmix64's
// finaliser) so that nearby ids spread over the whole range.
func sessionHash(id string, seed uint64) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// keep reports whether r goes to the tape.
func (f *recordFilter) keep(r *tape.Record) bool {
	if r.Session != "" && !f.sessionSampled(r.Session) {
		return false
	}
	if r.Type != tape.TypeMessage || (len(f.only) == 0 && len(f.skip) == 0) {
		return true
	}
	info := jsonrpc.Classify(r.Frame)
	switch info.Kind {
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		if f.methodKept(info.Method) {
			return true
		}
		if info.Kind == jsonrpc.KindRequest {
			f.mu.Lock()
			if len(f.dropped) < maxDroppedRequests {
				f.dropped[droppedKey{r.Session, r.Dir, string(info.ID.Raw)}] = struct{}{}
			}
			f.mu.Unlock()
		}
		return false
	case jsonrpc.KindResponse, jsonrpc.KindError:
		k := droppedKey{r.Session, tape.ClientToServer, string(info.ID.Raw)}
		if r.Dir == tape.ClientToServer {
			k.dir = tape.ServerToClient
		}
		f.mu.Lock()
		_, drop := f.dropped[k]
		delete(f.dropped, k)
		f.mu.Unlock()
		return !drop
	}
	return true // not a message we can name: kept
}

// methodKept applies --record-only and --skip to a method.
func (f *recordFilter) methodKept(m string) bool {
	if len(f.only) > 0 && !anyMatch(f.only, m) {
		return false
	}
	return !anyMatch(f.skip, m)
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// parseless reports whether nothing of the exchange's messages is needed:
// its session is out of the sample and no observer counts messages. Its
// bodies are then forwarded without being copied, decoded or framed.
func (x *exchange) parseless() bool {
	return x.unsampled && x.p.o.obs == nil
}
