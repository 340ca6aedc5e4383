package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/transport"
)

// Batch outcomes, as counted in BatchReport.Outcomes.
const (
	BatchAccepted = "accepted"            // every member answered
	BatchPartial  = "partly answered"     // some members answered before the timeout
	BatchHung     = "hung until timeout"  // HTTP: no member answered, the answer stayed open
	BatchDropped  = "no answer to batch"  // the answer ended (or was 202) with no member answered; over stdio, nothing came back (see BatchGrace)
	BatchRejected = "rejected with HTTP " // + status code
	BatchFailed   = "not sent"            // the send itself failed
	BatchLost     = "connection lost"     // the connection ended (the stdio server exited) before any answer
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

// BatchGrace is how long, over stdio, a batch may stay without any answer
// once the server answered the ping sent right after it: a server that
// has answered a later line and then nothing of the batch for that long
// has dropped the batch ("no answer to batch"), and its members are not
// waited for until the timeout.
const BatchGrace = time.Second

// doBatch sends len(ts) requests as one JSON-RPC batch and records each
// answer, and how the server answered the batch as a whole. Over stdio a
// ping follows the batch (see BatchGrace); it is not counted.
func (s *session) doBatch(ctx context.Context, ts []*template, intended time.Time, buf []byte, rng *rand.Rand) ([]byte, bool) {
	st := s.r.st
	conn, err := s.ensure(ctx)
	if err != nil {
		return buf, ctx.Err() == nil
	}
	k := int64(len(ts))
	first := s.nextID.Add(k) - k + 1
	answers := make(chan reply, k+1) // one per member, one for the probe
	names := make([][]string, len(ts))
	buf = append(s.r.frameBuf(buf), '[')
	st.mu.Lock()
	for i, t := range ts {
		t = t.render(reqVars{session: s.no, iteration: s.iter.Add(1) - 1, rng: rng})
		ts[i] = t
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = t.appendFrame(buf, first+int64(i))
		names[i] = t.series
	}
	st.sentLocked(intended, names...)
	st.inflt.add(intended, k)
	st.mu.Unlock()
	buf = append(buf, ']')
	for i, t := range ts {
		s.register(conn, &call{done: answers, names: names[i], tmpl: t}, first+int64(i))
	}

	deadline := time.Now().Add(s.r.o.timeout)
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// the exchange carries the deadline; unless every answer came, its
	// response stream is closed when the batch is done with
	ex, err := conn.Send(ctx, buf, transport.SendOptions{Deadline: deadline})
	accepted := false
	defer func() {
		if ex != nil && !accepted {
			ex.CloseStream()
		}
	}()
	if err != nil {
		for i := range ts {
			s.forget(first + int64(i))
		}
		st.flying(intended, -k)
		var se *transport.StatusError
		outcome := BatchFailed
		if asStatus(err, &se) {
			outcome = BatchRejected + strconv.Itoa(se.Status)
		}
		if s.r.work.Err() == nil {
			st.batchOutcome(outcome)
		}
		for i := range ts {
			err = s.countErr(sctx, names[i], conn, err)
		}
		return buf, backsOff(err)
	}
	probe := int64(0)
	if s.r.target.Command != nil {
		probe = s.probe(sctx, conn, answers)
	}
	got, answered, lost, dropped := s.collect(sctx, conn, ts, names, first, probe, answers, intended)
	st.flying(intended, int64(answered)-k) // the answered ones are counted off already
	for i := range ts {
		if got[i] {
			continue
		}
		s.forget(first + int64(i))
		switch {
		case dropped:
			st.fail(names[i], ClassDropped, detailNoBatch)
		default:
			s.countErr(sctx, names[i], conn, sctx.Err())
		}
	}
	if s.r.work.Err() != nil {
		return buf, false
	}
	switch {
	case answered == len(ts):
		st.batchOutcome(BatchAccepted)
		accepted = true
	case answered > 0:
		st.batchOutcome(BatchPartial)
	case lost > 0:
		st.batchOutcome(BatchLost)
	case dropped || s.r.target.Command != nil || (ex != nil && isClosed(ex.Done()) && ex.Frames() == 0):
		st.batchOutcome(BatchDropped)
	default:
		st.batchOutcome(BatchHung)
	}
	return buf, lost > 0
}

// probe sends a ping after a batch over stdio, its answer to come on
// answers; it returns its id, 0 when it could not be sent.
func (s *session) probe(ctx context.Context, conn transport.Conn, answers chan reply) int64 {
	id := s.nextID.Add(1)
	s.register(conn, &call{done: answers}, id)
	if _, err := conn.Send(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id), transport.SendOptions{}); err != nil {
		s.forget(id)
		return 0
	}
	return id
}

// collect waits for the answers to the members of a batch (ids from
// first) until ctx ends or, once the probe was answered with no member
// answered, for BatchGrace. It records the answers and counts the members
// whose connection was lost; got says which members were settled.
// dropped reports that the grace ran out.
func (s *session) collect(ctx context.Context, conn transport.Conn, ts []*template, names [][]string, first, probe int64,
	answers chan reply, intended time.Time) (got []bool, answered, lost int, dropped bool) {
	st := s.r.st
	defer s.forget(probe)
	got = make([]bool, len(ts))
	left := len(ts)
	var grace <-chan time.Time
	for left > 0 {
		select {
		case rep := <-answers:
			if rep.id == probe {
				if left == len(ts) && rep.err == nil {
					t := time.NewTimer(BatchGrace)
					defer t.Stop()
					grace = t.C
				}
				continue
			}
			i := rep.id - first
			if i < 0 || i >= int64(len(ts)) || got[i] {
				continue
			}
			got[i] = true
			left--
			if rep.err != nil {
				lost++
				s.countErr(ctx, names[i], conn, rep.err)
				continue
			}
			answered++
			st.answered(names[i], intended, rep.at)
			s.judge(names[i], ts[i], &rep)
		case <-grace:
			return got, answered, lost, true
		case <-ctx.Done():
			return got, answered, lost, false
		}
	}
	return got, answered, lost, false
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Verdict says in a few words whether the batches were answered: "every
// batch answered", "no batch answered at all", "N of M batches answered
// in full".
func (b *BatchReport) Verdict() string {
	var total, full, some int64
	for _, o := range b.Outcomes {
		total += o.Count
		switch o.Class {
		case BatchAccepted:
			full += o.Count
		case BatchPartial:
			some += o.Count
		}
	}
	switch {
	case total == 0:
		return "no batch sent"
	case full == total:
		return "every batch answered"
	case full+some == 0:
		return "no batch answered at all"
	}
	return fmt.Sprintf("%d of %d %s answered in full", full, total, english.Noun(total, "batch"))
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
