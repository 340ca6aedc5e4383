package loadgen

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// progressStats counts the notifications/progress of calls sent with a
// progressToken (--progress).
type progressStats struct {
	calls         int64 // answered calls that got at least one notification
	notifications int64 // notifications matched to a call
	afterResponse int64 // notifications for a call already answered
	notIncreasing int64 // notifications whose progress did not increase
	unknownToken  int64 // notifications for a token never sent
}

// firstProgressSuffix names the series of times from the intended send to
// the first progress notification: "<series> first progress".
const firstProgressSuffix = " first progress"

// intervalSuffix names the series of times between consecutive progress
// notifications of one call.
const intervalSuffix = " progress interval"

// progress handles one notifications/progress from the server.
func (s *session) progress(at time.Time, info jsonrpc.Info, frame []byte) {
	st := s.r.st
	tok, err := strconv.ParseInt(string(info.ProgressToken.Raw), 10, 64)
	if err != nil || tok <= 0 || tok > s.nextID.Load() {
		st.add(&st.prog.unknownToken, 1)
		return
	}
	var m struct {
		Params struct {
			Progress float64 `json:"progress"`
		} `json:"params"`
	}
	_ = json.Unmarshal(frame, &m)
	s.mu.Lock()
	c := s.pending[tok]
	var gap time.Duration
	var series string
	bad := false
	if c != nil {
		if c.progress > 0 {
			bad = m.Params.Progress <= c.last
			gap = at.Sub(c.lastAt)
		} else {
			c.first = at
		}
		c.lastAt = at
		c.progress++
		c.last = m.Params.Progress
		if c.tmpl != nil {
			n := c.tmpl.series
			series = n[len(n)-1]
		}
	}
	s.mu.Unlock()
	st.mu.Lock()
	switch {
	case c == nil:
		st.prog.afterResponse++
	default:
		st.prog.notifications++
		if bad {
			st.prog.notIncreasing++
		}
	}
	st.mu.Unlock()
	if gap > 0 && series != "" {
		st.record([]string{series + intervalSuffix}, gap)
	}
}

// noteProgress records, once a call is answered, whether it got progress
// and how soon after it was due.
func (s *session) noteProgress(series string, c *call, intended time.Time) {
	s.mu.Lock()
	n, first := c.progress, c.first
	s.mu.Unlock()
	if n == 0 {
		return
	}
	s.r.st.add(&s.r.st.prog.calls, 1)
	s.r.st.record([]string{series + firstProgressSuffix}, first.Sub(intended))
}
