package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/mcptape/mcptape/transport"
)

// Batch outcomes, as counted in BatchReport.Outcomes.
const (
	BatchAccepted = "accepted"            // every member answered
	BatchPartial  = "partly answered"     // some members answered before the timeout
	BatchHung     = "hung until timeout"  // HTTP: no member answered, the answer stayed open
	BatchDropped  = "dropped"             // the answer ended (or was 202) with no member answered; over stdio, nothing came back before the timeout
	BatchRejected = "rejected with HTTP " // + status code
	BatchFailed   = "not sent"            // the send itself failed
)

// BatchReport says how the server answered JSON-RPC batches (WithBatch).
type BatchReport struct {
	// Size is the number of requests per batch.
	Size int `json:"size"`
	// Negotiated is the protocol version the first session negotiated;
	// InSpec reports whether that version has batches (only 2025-03-26).
	Negotiated string `json:"negotiated"`
	InSpec     bool   `json:"in_spec"`
	// Outcomes counts the batches by how the server answered them.
	Outcomes []ErrorCount `json:"outcomes"`
}

// batchVersion reports whether protocol version v has JSON-RPC batches.
func batchVersion(v string) bool { return v == "2025-03-26" }

// negotiatedVersion returns result.protocolVersion of an initialize answer.
func negotiatedVersion(frame []byte) string {
	var m struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	_ = json.Unmarshal(frame, &m)
	return m.Result.ProtocolVersion
}

// negotiated notes the version the first session negotiated, and says up
// front when batches are asked for and that version has none.
func (r *runner) negotiated(v string) {
	r.versionOnce.Do(func() {
		r.version = v
		if r.o.batch > 1 && !batchVersion(v) && r.o.notice != nil {
			r.o.notice(fmt.Sprintf("negotiated protocol %s has no JSON-RPC batches (only 2025-03-26 has them): sending batches of %d anyway to see how the server answers", v, r.o.batch))
		}
	})
}

// doBatch sends len(ts) requests as one JSON-RPC batch and records each
// answer, and how the server answered the batch as a whole.
func (s *session) doBatch(ctx context.Context, ts []*template, intended time.Time, buf []byte, rng *rand.Rand) []byte {
	st := s.r.st
	if err := s.ensure(ctx); err != nil {
		return buf
	}
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	k := int64(len(ts))
	first := s.nextID.Add(k) - k + 1
	calls := make([]*call, len(ts))
	buf = append(s.r.frameBuf(buf), '[')
	for i, t := range ts {
		t = t.render(reqVars{session: s.no, iteration: s.iter.Add(1) - 1, rng: rng})
		ts[i] = t
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = t.appendFrame(buf, first+int64(i))
		calls[i] = &call{done: make(chan reply, 1), tmpl: t}
		s.register(conn, calls[i], first+int64(i))
	}
	buf = append(buf, ']')
	st.mu.Lock()
	st.sent += k
	st.inflt += k
	st.mu.Unlock()
	defer st.add(&st.inflt, -k)

	sctx, cancel := context.WithTimeout(ctx, s.r.o.timeout)
	release := cancel // once every answer came: releaseAfter
	defer func() { release() }()
	ex, err := conn.Send(sctx, buf, transport.SendOptions{})
	if err != nil {
		for i := range ts {
			s.forget(first + int64(i))
		}
		if s.r.work.Err() != nil {
			return buf
		}
		var se *transport.StatusError
		outcome := BatchFailed
		if asStatus(err, &se) {
			outcome = BatchRejected + strconv.Itoa(se.Status)
		}
		st.batchOutcome(outcome)
		for range ts {
			s.countSendError(sctx, err)
		}
		return buf
	}
	answered := 0
	for i, c := range calls {
		select {
		case rep := <-c.done:
			answered++
			st.add(&st.done, 1)
			names := ts[i].call.Series()
			st.record(names, rep.at.Sub(intended))
			s.judge(ts[i], &rep)
		case <-sctx.Done():
			s.forget(first + int64(i))
			if s.r.work.Err() == nil {
				st.fail(ClassTimeout, "batch member")
			}
		}
	}
	if s.r.work.Err() != nil {
		return buf
	}
	switch {
	case answered == len(ts):
		st.batchOutcome(BatchAccepted)
		release = func() { releaseAfter(ex, cancel) }
	case answered > 0:
		st.batchOutcome(BatchPartial)
	case ex != nil && isClosed(ex.Done()) && ex.Frames() == 0:
		st.batchOutcome(BatchDropped)
	default:
		st.batchOutcome(BatchHung)
	}
	return buf
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// batchOutcome counts one batch answered in the given way.
func (s *stats) batchOutcome(what string) {
	s.mu.Lock()
	if s.batches == nil {
		s.batches = make(map[string]int64)
	}
	s.batches[what]++
	s.mu.Unlock()
}

// batchReport returns the batch figures (stats locked by the caller).
func (r *runner) batchReport() *BatchReport {
	if r.o.batch < 2 {
		return nil
	}
	b := &BatchReport{Size: r.o.batch, Negotiated: r.version, InSpec: batchVersion(r.version)}
	for what, n := range r.st.batches {
		b.Outcomes = append(b.Outcomes, ErrorCount{Class: what, Count: n})
	}
	sort.Slice(b.Outcomes, func(i, j int) bool { return b.Outcomes[i].Class < b.Outcomes[j].Class })
	return b
}

// mergeBatch adds b to into (nil when neither exists).
func mergeBatch(into, b *BatchReport) *BatchReport {
	if b == nil {
		return into
	}
	if into == nil {
		into = &BatchReport{Size: b.Size, Negotiated: b.Negotiated, InSpec: b.InSpec}
	}
	m := map[string]int64{}
	for _, o := range into.Outcomes {
		m[o.Class] += o.Count
	}
	for _, o := range b.Outcomes {
		m[o.Class] += o.Count
	}
	into.Outcomes = into.Outcomes[:0]
	for what, n := range m {
		into.Outcomes = append(into.Outcomes, ErrorCount{Class: what, Count: n})
	}
	sort.Slice(into.Outcomes, func(i, j int) bool { return into.Outcomes[i].Class < into.Outcomes[j].Class })
	return into
}
