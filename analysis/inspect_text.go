package analysis

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/termsafe"
)

// Text layout bounds: how many entries of a list the text form shows.
const (
	textMethods  = 8
	textSessions = 20
	textRows     = 15
)

// WriteJSON writes the report as indented JSON followed by a newline.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("analysis: writing JSON: %w", err)
	}
	return nil
}

// WriteText writes the report for a terminal, top-down: the tape, its
// problems worst first, the sessions, then latency, tools, progress,
// cancellations, operations, errors and unanswered requests. Lines stay
// within about 100 columns; long lists are cut with a count of the rest
// (the JSON form has everything).
func WriteText(w io.Writer, rep *Report) error {
	safe := termsafe.NewWriter(w) // names from the tape stay text
	b := bufio.NewWriter(safe)
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	t := rep.Tape

	p("TAPE  %s", rep.File)
	p("  %s %s · %s · %s", or(t.Tool, "?"), or(t.Version, "?"), or(t.Transport, "?"), clip(or(t.Target, "(no target)"), 70))
	start := "unknown start"
	if t.OriginNS != 0 {
		start = "started " + time.Unix(0, t.OriginNS).UTC().Format("2006-01-02 15:04:05.000 UTC")
	}
	spans := fmtDur(t.DurationNS)
	if t.OriginNS != 0 && t.FirstNS-t.OriginNS >= int64(time.Millisecond) { // the first record came later than the header
		spans += " from " + offset(t.FirstNS-t.OriginNS)
	}
	p("  %s · spans %s · %s · %s in %s", start, spans, english.Count(int64(len(rep.Sessions)+rep.SessionsFolded), "session"),
		english.Count(t.Messages, "message"), english.Count(t.Records, "record"))
	if t.Late > 0 || t.Reordered > 0 {
		p("  %s", writerOrder(t))
	}

	p("")
	p("PROBLEMS  (worst first; +1.234s: time since the tape started)")
	if len(rep.Problems) == 0 {
		p("  none")
	}
	for _, pr := range rep.Problems {
		p("  %-8s %s", pr.Severity, clip(pr.Summary, 89))
		for _, d := range pr.Details {
			p("           %s", clip(d, 89))
		}
		if more := pr.Count - int64(len(pr.Details)); len(pr.Details) > 0 && more > 0 && pr.What != "error-response" && pr.What != "tool-error" {
			p("           … %d more", more)
		}
	}

	p("")
	p("SESSIONS  (first to last record since the tape started; → client to server, ← server to client)")
	for i, s := range rep.Sessions {
		if i == textSessions {
			p("  … %d more sessions (see --format json)", len(rep.Sessions)-textSessions)
			break
		}
		writeSession(p, &s, t.OriginNS)
	}
	if rep.SessionsFolded > 0 {
		p("  … %d more sessions not listed (the listing limit was reached)", rep.SessionsFolded)
	}

	if len(rep.Latency) > 0 {
		p("")
		p("LATENCY  (slowest p99 first)        count    mean     p50     p90     p99     max  errors")
		for i, l := range rep.Latency {
			if i == textRows {
				p("  … %d more", len(rep.Latency)-textRows)
				break
			}
			p("  %s %-30s %s  %6d", arrow(l.Dir), clip(or(l.Method, "(unknown)"), 30), latencyCols(l.Latency), l.Errors)
		}
	}
	if len(rep.Tools) > 0 {
		p("")
		p("TOOLS                               calls    mean     p50     p90     p99     max  errors  isError")
		for i, tl := range rep.Tools {
			if i == textRows {
				p("  … %d more", len(rep.Tools)-textRows)
				break
			}
			p("  %-32s %s  %6d  %7d", clip(or(tl.Name, "(no name)"), 32), latencyCols(tl.Latency), tl.Errors, tl.ToolErrors)
		}
	}
	writeActivity(p, rep)
	writeStreams(p, rep.Streams)
	if len(rep.Errors) > 0 {
		p("")
		p("ERRORS  (by code and message)")
		for i, e := range rep.Errors {
			if i == textRows {
				p("  … %d more", len(rep.Errors)-textRows)
				break
			}
			p("  %7d  %-60s ×%d  %s", e.Code, clip(e.Message, 60), e.Count, e.Method)
		}
	}
	if u := rep.Unanswered; u.Count > 0 || u.Cancelled > 0 {
		p("")
		p("UNANSWERED  %d, plus %d cancelled (need no answer)", u.Count, u.Cancelled)
		for _, r := range u.Requests {
			p("  %s", clip(describeRef(r), 98))
		}
		if more := u.Count - int64(len(u.Requests)); more > 0 {
			p("  … %d more", more)
		}
	}
	u := rep.Unanswered
	writeRefs(p, u.BrokenOff, u.BrokenOffRequests, "BROKEN OFF  %d (the server's response or connection broke off, or the server ended the session, before the answer; the status of a response that had started is shown)")
	writeRefs(p, u.CutByShutdown, u.CutByShutdownRequests, "CUT BY THE RECORDER'S SHUTDOWN  %d (the recorder stopped before the server answered; the status of a response that had started is shown)")
	writeRefs(p, u.ClientGone, u.ClientGoneRequests, "CLIENT GONE  %d (in flight when the client ended the session: closed stdin, deleted it, closed its connection)")
	writeRefs(p, u.LostInGap, u.LostInGapRequests, "LOST IN A GAP  %d (answer unknown: records are missing from the tape after the request, a tape of the recording missing or damaged)")
	if err := b.Flush(); err != nil {
		return fmt.Errorf("analysis: writing text: %w", err)
	}
	if err := safe.Flush(); err != nil {
		return fmt.Errorf("analysis: writing text: %w", err)
	}
	return nil
}

// writeSession writes one session's block. Its span is given by the
// offsets of its first and last records from origin, the tape's start,
// which every other offset of the report counts from too (as show's do),
// so that a problem's "+1.234s [session]" falls within its session's span.
func writeSession(p func(string, ...any), s *SessionReport, origin int64) {
	span := fmtDur(s.DurationNS)
	if origin != 0 {
		span = offset(s.FirstNS-origin) + " to " + offset(s.LastNS-origin) + " (" + span + ")"
	}
	head := fmt.Sprintf("  %s  %s", clip(or(s.ID, "(none)"), 40), span)
	if s.ProtocolVersion != "" {
		head += " · protocol " + s.ProtocolVersion
		if s.RequestedVersion != "" && s.RequestedVersion != s.ProtocolVersion {
			head += " (asked " + s.RequestedVersion + ")"
		}
	}
	p("%s", head)
	var peers []string
	if s.Client != nil {
		peers = append(peers, "client "+peerText(s.Client))
	}
	if s.Server != nil {
		peers = append(peers, "server "+peerText(s.Server))
	}
	if len(peers) > 0 {
		p("     %s", strings.Join(peers, " · "))
	}
	kinds := []string{}
	for _, k := range []string{"request", "notification", "response", "error", "batch", "invalid"} {
		if n := s.ByKind[k]; n > 0 {
			kinds = append(kinds, english.Count(n, k))
		}
	}
	p("     %s: %d →, %d ←; %s", english.Count(s.Messages, "message"), s.ByDir["c2s"], s.ByDir["s2c"], strings.Join(kinds, ", "))
	if len(s.ByMethod) > 0 {
		var parts []string
		for i, m := range s.ByMethod {
			if i == textMethods {
				parts = append(parts, fmt.Sprintf("+%d more", len(s.ByMethod)-textMethods))
				break
			}
			name := or(m.Method, "(unpaired)")
			if m.Kind == "response" || m.Kind == "error" {
				name += " " + m.Kind
			}
			parts = append(parts, fmt.Sprintf("%s %s %d", arrow(m.Dir), name, m.Count))
		}
		writeWrapped(p, "     methods  ", parts)
	}
	if len(s.ToolsCalled) > 0 {
		var parts []string
		for i, t := range s.ToolsCalled {
			if i == textMethods {
				parts = append(parts, fmt.Sprintf("+%d more", len(s.ToolsCalled)-textMethods))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d", clip(or(t.Name, "(no name)"), 40), t.Count))
		}
		writeWrapped(p, "     tools    ", parts)
	}
	if st := s.Stderr; st != nil {
		last := ""
		if len(st.Last) > 0 {
			last = ", last: " + strconv.Quote(clip(st.Last[len(st.Last)-1], 60))
		}
		p("     stderr   %s%s", english.Count(st.Lines, "line"), last)
	}
	if s.Exit != nil || s.ClosedBy != "" {
		end := []string{}
		if s.Exit != nil {
			end = append(end, describeExit(s.Exit))
		}
		if s.ClosedBy != "" {
			end = append(end, "closed by "+s.ClosedBy)
		}
		p("     end      %s", strings.Join(end, ", "))
	}
}

// writeWrapped writes parts joined by ", " on lines of at most 100
// columns, the first one after prefix and the others indented as much.
func writeWrapped(p func(string, ...any), prefix string, parts []string) {
	indent := strings.Repeat(" ", len([]rune(prefix)))
	line := prefix
	for i, part := range parts {
		sep := ""
		if i < len(parts)-1 {
			sep = ","
		}
		if len([]rune(line))+len([]rune(part))+1 > 100 && line != prefix && line != indent {
			p("%s", strings.TrimRight(line, " "))
			line = indent
		}
		line += part + sep + " "
	}
	p("%s", strings.TrimRight(line, " "))
}

// writeActivity writes the progress, cancellation and operation lines.
func writeActivity(p func(string, ...any), rep *Report) {
	pr, c, op := rep.Progress, rep.Cancellations, rep.Operations
	if pr.Requested == 0 && pr.Notifications == 0 && c.Count == 0 && op.MRTR.Operations+op.MRTR.Abandoned == 0 && op.Tasks.Tasks == 0 {
		return
	}
	p("")
	if pr.Requested > 0 || pr.Notifications > 0 {
		line := fmt.Sprintf("PROGRESS       %d of %d %s got %s (at most %d)",
			pr.Streams, pr.Requested, english.Noun(pr.Requested, "request"), english.Count(pr.Notifications, "notification"), pr.MaxPerRequest)
		if pr.FirstProgress.Count > 0 {
			line += fmt.Sprintf(", the first after %s (p50)", fmtDur(pr.FirstProgress.P50NS))
		}
		p("%s", line)
		if pr.NotIncreasing+pr.AfterResponse+pr.UnknownToken > 0 {
			p("               %d not increasing, %d after the response, %d with an unknown token", pr.NotIncreasing, pr.AfterResponse, pr.UnknownToken)
		}
	}
	if c.Count > 0 {
		line := fmt.Sprintf("CANCELLATIONS  %d: %d answered anyway, %d not answered, %d of no request in flight", c.Count, c.AnsweredAnyway, c.NotAnswered, c.UnknownTarget)
		if c.StreamClosed > 0 {
			line += ", " + english.Count(c.StreamClosed, "stream close")
		}
		p("%s", line)
	}
	if m := op.MRTR; m.Operations+m.Abandoned > 0 {
		p("MRTR           %s in %s (at most %d), %s per operation (p50), %d abandoned",
			english.Count(m.Operations, "operation"), english.Count(m.Rounds, "round"), m.MaxRounds, fmtDur(m.Latency.P50NS), m.Abandoned)
	}
	if t := op.Tasks; t.Tasks > 0 {
		p("TASKS          %s, %s, %d completed in %s (p50), %d unfinished",
			english.Count(t.Tasks, "task"), english.Count(t.Polls, "poll"), t.Completed, fmtDur(t.Latency.P50NS), t.Unfinished)
	}
}

func latencyCols(l Latency) string {
	return fmt.Sprintf("%6d %7s %7s %7s %7s %7s", l.Count, fmtDur(l.MeanNS), fmtDur(l.P50NS), fmtDur(l.P90NS), fmtDur(l.P99NS), fmtDur(l.MaxNS))
}

func peerText(p *Peer) string {
	s := clip(p.Name, 40)
	if p.Version != "" {
		s += " " + clip(p.Version, 20)
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fmtDur writes a duration with three significant digits: 850ns, 12.3µs,
// 1.23ms, 45.6s, 2m03s, 1h02m.
func fmtDur(ns int64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	d := time.Duration(ns)
	var s string
	switch {
	case d < time.Microsecond:
		s = fmt.Sprintf("%dns", ns)
	case d < time.Millisecond:
		s = sig3(float64(ns)/1e3) + "µs"
	case d < time.Second:
		s = sig3(float64(ns)/1e6) + "ms"
	case d < time.Minute:
		s = sig3(float64(ns)/1e9) + "s"
	case d < time.Hour:
		s = fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	default:
		s = fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return neg + s
}

// sig3 writes v (1 <= v < 1000) with three significant digits.
func sig3(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// offset writes a time since the tape's origin: "+1.234s".
func offset(ns int64) string {
	sign := "+"
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%03ds", sign, ns/1e9, ns%1e9/1e6)
}

// writerOrder says what the tape writer did to keep the records in time
// order: records written late (their time moved) and reordered.
func writerOrder(t TapeInfo) string {
	var parts []string
	if t.Late > 0 {
		parts = append(parts, fmt.Sprintf("%s written late, their time moved forward by up to %s", english.Count(t.Late, "record"), fmtDur(t.LateMaxNS)))
	}
	if t.Reordered > 0 {
		parts = append(parts, fmt.Sprintf("%s moved into time order", english.Count(t.Reordered, "record")))
	}
	return "writer: " + strings.Join(parts, " · ")
}

// writeRefs writes a block of n requests, the first ones listed in refs,
// under the heading format (given n); nothing when n is 0.
func writeRefs(p func(string, ...any), n int64, refs []RequestRef, format string) {
	if n == 0 {
		return
	}
	p("")
	p(format, n)
	for _, r := range refs {
		p("  %s", clip(describeRef(r), 98))
	}
	if more := n - int64(len(refs)); more > 0 {
		p("  … %d more", more)
	}
}
