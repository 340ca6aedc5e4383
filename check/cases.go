package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/loadgen"
)

// maxDetails bounds the detail lines of a case.
const maxDetails = 5

// tapeCases returns the cases of one tape: every signal for every session
// listed, for the sessions folded beyond the listing bound together, the
// tape-wide signals (a refused WebSocket upgrade, incomplete, drift), then
// the assertions.
func (o *options) tapeCases(ctx context.Context, path string, rep *analysis.Report) ([]Case, error) {
	var out []Case
	for i := range rep.Sessions {
		out = o.sessionCases(out, path, rep, &rep.Sessions[i], 0)
	}
	if f := rep.FoldedSessions; f != nil {
		out = o.sessionCases(out, path, rep, f, rep.SessionsFolded)
	}
	signal := func(name string, n int64, msg string, details []string) {
		out = append(out, o.signalCase(Case{Tape: path}, name, n, msg, details))
	}
	if n := rep.RefusedUpgradesN; n > 0 { // no session came of them: a case of the tape
		var d []string
		for _, ex := range rep.RefusedUpgrades {
			d = append(d, fmt.Sprintf("record %d: WebSocket upgrade %s", ex.Seq, ex.Detail))
		}
		signal(SignalError, n, english.Count(n, "WebSocket upgrade")+" refused with an HTTP error", d)
	}
	var incomplete []string
	if rep.Tape.Warning != "" {
		incomplete = append(incomplete, rep.Tape.Warning)
	}
	if rep.Tape.Gaps > 0 {
		incomplete = append(incomplete, "records missing at "+english.Count(rep.Tape.Gaps, "place")+" (a damaged or missing tape of the recording, a write error)")
	}
	if rep.CutMessages > 0 {
		incomplete = append(incomplete, english.Count(rep.CutMessages, "message")+" recorded cut")
	}
	if rep.UnrecordedMessages > 0 {
		incomplete = append(incomplete, english.Count(rep.UnrecordedMessages, "message")+" not recorded (over the recorder's limit)")
	}
	signal(SignalIncomplete, int64(len(incomplete)), strings.Join(incomplete, "; "), nil)
	var driftErr error
	if o.baseline != nil {
		c, err := o.driftCase(ctx, path)
		if err != nil {
			driftErr = err
		} else {
			out = append(out, c)
		}
	}
	for _, m := range o.maxDuration {
		if m.series != "" {
			c := Case{Tape: path, Name: "max-duration " + m.spec, Signal: "assertion", Selected: true}
			sr := loadView(rep).Find(m.series)
			switch {
			case sr == nil:
				c.Fired, c.Message = true, fmt.Sprintf("no series %q in the tape", m.series)
			case sr.Max > m.d:
				c.Fired, c.Message = true, fmt.Sprintf("%s took up to %s", m.series, loadgen.FormatLatency(sr.Max))
				c.Measured = measured(float64(sr.Max))
			}
			out = append(out, c)
		}
	}
	view := loadView(rep)
	for _, t := range o.thresholds {
		c := Case{Tape: path, Name: "threshold " + t.Spec, Signal: "assertion", Selected: true}
		if o := t.Eval(view); !o.Held {
			c.Fired, c.Message = true, o.Why // the name gives the spec
			if o.Found {
				c.Measured = measured(o.Measured)
			}
		}
		out = append(out, c)
	}
	return out, driftErr
}

// signalCase returns the case of signal name in where (its tape and
// session): fired when n > 0, with the message and the first details.
func (o *options) signalCase(where Case, name string, n int64, msg string, details []string) Case {
	c := where
	c.Name, c.Signal, c.Selected, c.Fired, c.Count = name, name, o.failOn[name], n > 0, n
	if c.Fired {
		c.Message, c.Details = msg, details[:min(len(details), maxDetails)]
	}
	return c
}

// sessionCases appends to out the cases of session s of the tape at path:
// every signal and the assertions on a session. With folded > 0, s sums
// that many sessions folded beyond the listing bound
// (analysis.Report.FoldedSessions), whose cases cover them together.
func (o *options) sessionCases(out []Case, path string, rep *analysis.Report, s *analysis.SessionReport, folded int) []Case {
	where := Case{Tape: path, Session: s.ID, Folded: folded}
	signal := func(name string, n int64, msg string, details []string) {
		out = append(out, o.signalCase(where, name, n, msg, details))
	}
	d := s.Details
	if d == nil {
		d = &analysis.SessionDetails{}
	}
	msg := english.Count(s.Errors, "error response")
	if s.Refused > 0 {
		msg += ", " + english.Count(s.Refused, "request") + " refused with an HTTP error"
	}
	if s.RefusedNotifications > 0 {
		msg += ", " + english.Count(s.RefusedNotifications, "notification") + " refused with an HTTP error"
	}
	signal(SignalError, s.Errors+s.Refused+s.RefusedNotifications, msg, append(errorsIn(d), refs(d.Refused, "refused with")...))
	signal(SignalToolError, s.ToolErrors, english.Count(s.ToolErrors, "tool call")+" returned isError", nil)
	v, vd := violationsIn(rep, s, folded > 0)
	signal(SignalViolation, s.Violations, english.Count(s.Violations, "protocol violation")+": "+strings.Join(v, ", "), vd)
	var unanswered []string
	if s.Unanswered > 0 || s.BrokenOff == 0 {
		unanswered = append(unanswered, english.Count(s.Unanswered, "request")+" never answered")
	}
	if s.BrokenOff > 0 {
		unanswered = append(unanswered, english.Count(s.BrokenOff, "request")+" the server broke off before answering (its response or the session)")
	}
	msg = strings.Join(unanswered, ", ")
	signal(SignalUnanswered, s.Unanswered+s.BrokenOff, msg, append(refs(d.Unanswered, ""), refs(d.BrokenOff, "broken off after")...))
	signal(SignalCancelled, s.Cancelled, english.Count(s.Cancelled, "request")+" cancelled", nil)
	signal(SignalAbandoned, s.Abandoned, english.Count(s.Abandoned, "multi round-trip operation")+" abandoned (its last answer asked for input; never retried)",
		refs(d.Abandoned, ""))
	signal(SignalUnfinished, s.Unfinished, english.Count(s.Unfinished, "task")+" never finished (no terminal status or result seen)",
		refs(d.Unfinished, ""))
	var slow int64
	if s.MaxLatencyNS > int64(o.slow) {
		slow = 1
	}
	signal(SignalSlow, slow, fmt.Sprintf("%s took %s (more than %v)", s.Slowest, loadgen.FormatLatency(time.Duration(s.MaxLatencyNS)), o.slow), nil)
	dep := deprecatedIn(s)
	signal(SignalDeprecated, int64(len(dep)), strings.Join(dep, "; "), nil)
	for _, name := range o.forbid {
		c := where
		c.Name, c.Signal, c.Selected = "forbid-tool "+name, "assertion", true
		for _, t := range s.ToolsCalled {
			if t.Name == name {
				c.Fired, c.Count, c.Message = true, t.Count, name+" called "+english.Count(t.Count, "time")
			}
		}
		out = append(out, c)
	}
	lasted := "the session lasted "
	if folded > 0 {
		lasted = "the longest of them lasted "
	}
	for _, m := range o.maxDuration {
		if m.series == "" {
			c := where
			c.Name, c.Signal, c.Selected = "max-duration "+m.spec, "assertion", true
			if d := time.Duration(s.DurationNS); d > m.d {
				c.Fired, c.Message = true, lasted+loadgen.FormatLatency(d)
				c.Measured = measured(float64(d))
			}
			out = append(out, c)
		}
	}
	return out
}

// driftCase compares the surface of the tape at path with the baseline.
func (o *options) driftCase(ctx context.Context, path string) (Case, error) {
	s, err := o.readSurface(ctx, path) // tapes.go
	if err != nil {
		return Case{}, err
	}
	changes := analysis.DiffSurface(o.baseline, s)
	c := Case{Tape: path, Name: SignalDrift, Signal: SignalDrift, Selected: o.failOn[SignalDrift]}
	var breaking int64
	for _, ch := range changes {
		if ch.Breaking {
			breaking++
		}
		c.Details = append(c.Details, ch.String())
	}
	c.Fired, c.Count = breaking > 0, breaking
	unknown := analysis.NotCompared(o.baseline, s)
	if len(unknown) > 0 {
		c.Details = append(c.Details, analysis.NotComparedText(unknown))
	}
	switch {
	case len(changes) == 0 && len(unknown) > 0:
		c.Message = "the surface matches the baseline in what both list"
	case len(changes) == 0:
		c.Message = "the surface matches the baseline"
	case breaking == 0:
		c.Message = english.Count(len(changes), "change") + " from the baseline, none breaking"
	default:
		c.Message = fmt.Sprintf("%s from the baseline (%s)", english.Count(breaking, "breaking change"), english.Count(len(changes), "change"))
	}
	return c, nil
}

// violationsIn lists the rules broken in session s and examples of them:
// the session's own (its details); folded, s sums the sessions not
// listed, which keep none: the examples the tape keeps (a few per rule)
// of no session listed.
func violationsIn(rep *analysis.Report, s *analysis.SessionReport, folded bool) (rules, details []string) {
	for _, r := range s.ViolationRules {
		rules = append(rules, r.Name)
	}
	if d := s.Details; !folded && d != nil && len(d.Violations) > 0 {
		for _, ex := range d.Violations {
			details = append(details, fmt.Sprintf("%s: record %d: %s", ex.Rule, ex.Seq, ex.Detail))
		}
		return rules, details
	}
	var listed map[string]bool
	if folded {
		listed = make(map[string]bool, len(rep.Sessions))
		for _, l := range rep.Sessions {
			listed[l.ID] = true
		}
	}
	for _, v := range rep.Violations {
		for _, ex := range v.Examples {
			if folded && !listed[ex.Session] || !folded && ex.Session == s.ID {
				details = append(details, fmt.Sprintf("%s: record %d: %s", v.Rule, ex.Seq, ex.Detail))
			}
		}
	}
	return rules, details
}

// errorsIn describes the JSON-RPC error responses of a session's details:
// the request answered, the code and the message.
func errorsIn(d *analysis.SessionDetails) []string {
	var out []string
	for _, e := range d.ErrorResponses {
		req := "unpaired response id " + e.ID
		if e.Method != "" {
			req = describe(&e.RequestRef)
		}
		out = append(out, fmt.Sprintf("record %d: %s: error %d %s", e.Response, req, e.Code, e.Message))
	}
	return out
}

// refs describes requests of a session's details; with status, followed by
// " HTTP N" (their exchange's status, when it had one).
func refs(rs []analysis.RequestRef, status string) []string {
	var out []string
	for _, r := range rs {
		s := fmt.Sprintf("record %d: %s", r.Seq, describe(&r))
		if status != "" && r.Status != 0 {
			s += fmt.Sprintf(" %s HTTP %d", status, r.Status)
		}
		out = append(out, s)
	}
	return out
}

// describe names a request: "METHOD id ID [NAME]", a notification
// (no ID): "METHOD".
func describe(r *analysis.RequestRef) string {
	if r.ID == "" {
		return strings.TrimSpace(r.Method + " " + r.Name)
	}
	return strings.TrimSpace(fmt.Sprintf("%s id %s %s", r.Method, r.ID, r.Name))
}

// deprecatedIn lists the deprecated features a session used.
func deprecatedIn(s *analysis.SessionReport) []string {
	var out []string
	if v := s.ProtocolVersion; v != "" && v < "2025-03-26" {
		out = append(out, "protocol "+v)
	}
	if n := s.ByKind["batch"]; n > 0 {
		out = append(out, english.Count(n, "JSON-RPC batch")+" (removed in 2025-06-18)")
	}
	return out
}

// loadView presents rep as a load report, whose series mcptape load's
// thresholds measure: one series per client method and one per tool
// ("tools/call NAME"), the client's requests sent (answered or not,
// however they ended), the errors of the client's requests (JSON-RPC
// errors, tool errors, HTTP refusals but 401). The server's own requests
// are in neither: the errors the client answered them with are not failed
// requests of the client's, as they are none of load's (counted,
// "errors<F%" could pass 100%), and those it never answered are not
// requests of the client's either (counted, they lowered the share).
func loadView(rep *analysis.Report) *loadgen.Report {
	u := rep.Unanswered
	v := &loadgen.Report{Duration: time.Duration(rep.Tape.DurationNS),
		Requests: u.Count + u.Cancelled + u.CutByShutdown + u.BrokenOff + u.ClientGone + u.LostInGap - u.ServerRequests + rep.Refused.Count}
	v.ErrorTotal = rep.Refused.Count - rep.Refused.Unauthorized
	add := func(name string, l analysis.Latency) {
		sr := loadgen.Series{Name: name, Count: l.Count, Mean: time.Duration(l.MeanNS), P50: time.Duration(l.P50NS),
			P90: time.Duration(l.P90NS), P99: time.Duration(l.P99NS), Max: time.Duration(l.MaxNS)}
		if v.Duration > 0 {
			sr.Rate = float64(l.Count) / v.Duration.Seconds()
		}
		v.Series = append(v.Series, sr)
	}
	for _, l := range rep.Latency {
		if l.Dir == "c2s" {
			add(l.Method, l.Latency)
			v.Requests += l.Count
			v.ErrorTotal += l.Errors
		}
	}
	for _, t := range rep.Tools {
		add("tools/call "+t.Name, t.Latency)
		v.ErrorTotal += t.ToolErrors
	}
	// Every error of a tape is a request's: "errors<F%" (ErrorRatio)
	// divides RequestErrors, not ErrorTotal, by the requests.
	v.RequestErrors = v.ErrorTotal
	return v
}

// measured returns v for Case.Measured.
func measured(v float64) *float64 { return &v }
