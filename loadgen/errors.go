package loadgen

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcptape/mcptape/transport"
)

// Error kinds, as counted in Report.Errors (ErrorCount.Class). The detail
// (ErrorCount.Detail) names the error within its kind: the message of a
// transport error, the status and first line of the body of an HTTP
// error, the code and message of a JSON-RPC error, the tool of a tool
// error.
const (
	ClassTransport = "transport"       // no answer: connection refused, server exited, executable not found...
	ClassStatus    = "http status"     // a non-2xx HTTP answer
	ClassJSONRPC   = "jsonrpc error"   // a JSON-RPC error response
	ClassTool      = "tool isError"    // a tools/call result with isError true
	ClassTimeout   = "timeout"         // no answer within --timeout
	ClassCancelled = "cancelled"       // in flight when the run was interrupted
	ClassDropped   = "dropped"         // not sent (open model, max in flight) or never answered (a batch)
	ClassProtocol  = "protocol"        // an answer breaking JSON-RPC or MCP rules
	ClassExpired   = "session expired" // the server forgot the session: re-initialized
)

// Error details of their own.
const (
	detailInterrupted = "interrupted"
	detailMaxInFlight = "max in flight reached"
	detailNoBatch     = "no answer to batch"
	detailOther       = "(other)"
)

// maxErrorKeys bounds the distinct errors a run lists: beyond it, an error
// of a new detail is counted under its kind with the detail "(other)", so
// that a server putting request-specific text into its errors cannot grow
// the report without bound.
const maxErrorKeys = 200

// ServerExitError is the reason a request failed when the stdio server
// of its session exited: "server exited (status 1)".
type ServerExitError struct {
	// Status is how the server exited: "status 1", "signal SIGKILL", or
	// "status unknown" when it closed its output but did not exit in time.
	Status string
	// Err is the transport's error.
	Err error
}

// Error returns "server exited (STATUS)".
func (e *ServerExitError) Error() string { return "server exited (" + e.Status + ")" }

// Unwrap returns the transport's error.
func (e *ServerExitError) Unwrap() error { return e.Err }

// exitStatus describes how a child exited: "status N", or "signal NAME"
// when a signal ended it (transport.StdioConn.ExitStatus).
func exitStatus(code int, signal string) string {
	if signal != "" {
		return "signal " + signal
	}
	return "status " + strconv.Itoa(code)
}

// reason names the kind and detail of a failed exchange: err is what the
// transport (or the wait for the answer) returned, ctx the request's
// context.
func reason(ctx context.Context, err error) (class, detail string) {
	var se *transport.StatusError
	var xe *ServerExitError
	switch {
	case errors.Is(err, transport.ErrSessionExpired):
		return ClassExpired, ""
	case errors.As(err, &se):
		return ClassStatus, statusDetail(se)
	case errors.As(err, &xe):
		return ClassTransport, xe.Error()
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ClassTimeout, ""
	case errors.Is(err, context.Canceled):
		return ClassCancelled, detailInterrupted
	}
	return ClassTransport, transportMessage(err)
}

// statusDetail is "404 Not Found: <first line of the body>", then the
// transport's hint in parentheses when it has one (a legacy SSE stream URL
// given as --url).
func statusDetail(se *transport.StatusError) string {
	d := strconv.Itoa(se.Status)
	if t := http.StatusText(se.Status); t != "" {
		d += " " + t
	}
	if line := firstLine(se.Body, 80); line != "" {
		d += ": " + line
	}
	if h := se.Hint(); h != "" {
		d += " (" + h + ")"
	}
	return d
}

// firstLine returns the first non-empty line of b, trimmed, cut at max
// bytes (on a rune boundary, "..." marking the cut).
func firstLine(b []byte, max int) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimSpace(b)
	if len(b) > max {
		b = b[:max]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
		return strings.ToValidUTF8(string(b), "?") + "..."
	}
	return strings.ToValidUTF8(string(b), "?")
}

// transportMessage names a transport failure in a few stable words (no
// addresses, ports or process ids, so that equal failures count as one).
func transportMessage(err error) string {
	var dns *net.DNSError
	var cert x509.UnknownAuthorityError
	var host x509.HostnameError
	var inv x509.CertificateInvalidError
	var rec tls.RecordHeaderError
	var ee *exec.Error
	switch {
	case err == nil:
		return "unknown"
	case errors.As(err, &ee) && errors.Is(ee.Err, exec.ErrNotFound):
		return "executable not found: " + ee.Name
	case errors.As(err, &ee):
		return "cannot start " + ee.Name + ": " + innermost(ee.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.As(err, &dns):
		return "no such host " + dns.Name
	case errors.As(err, &cert), errors.As(err, &host), errors.As(err, &inv):
		return "TLS certificate not trusted (--insecure accepts it): " + innermost(err)
	case errors.As(err, &rec):
		return "TLS handshake failed: the server does not speak TLS"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "server closed the connection"
	case errors.Is(err, transport.ErrServerClosed):
		return "server closed the connection"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "network timeout"
	}
	return innermost(err)
}

// innermost returns the message of the deepest error err wraps: the
// system's own words, without the addresses the outer layers add.
func innermost(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// jsonrpcDetail is "CODE MESSAGE" of a JSON-RPC error answer (the message
// cut to one short line).
func jsonrpcDetail(code int64, frame []byte) string {
	var m struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	d := strconv.FormatInt(code, 10)
	if json.Unmarshal(frame, &m) == nil && m.Error.Message != "" {
		d += " " + firstLine([]byte(m.Error.Message), 80)
	}
	return d
}

// isRequestSeries reports whether names are those of a request of the
// workload (neither a session setup nor a scenario setup step).
func isRequestSeries(names []string) bool {
	return len(names) > 0 && !IsSetupSeries(names[0])
}

// IsSetupSeries reports whether the series named name is of setups:
// SetupSeries, or a scenario's per-session setup step ("setup " + its
// series). Setups are counted, not requests of the workload, and have no
// rate (Series.Rate 0).
func IsSetupSeries(name string) bool {
	return name == SetupSeries || strings.HasPrefix(name, "setup ")
}

// seriesCounts are the requests and errors of one series.
type seriesCounts struct{ requests, errors, tokens int64 }

// fail counts one error of class and detail, for a request of the named
// series (nil: an error of no request, such as a frame the server sent
// unasked).
func (s *stats) fail(names []string, class, detail string) {
	s.mu.Lock()
	s.failLocked(names, class, detail)
	s.mu.Unlock()
}

// failAnswer counts the error an answer carries, of class and detail, for
// a request of the named series: the request was answered, with an error.
func (s *stats) failAnswer(names []string, class, detail string) {
	s.mu.Lock()
	s.failLocked(names, class, detail)
	if isRequestSeries(names) {
		s.errAnswers++
	}
	s.mu.Unlock()
}

// failLocked is fail with s.mu held.
func (s *stats) failLocked(names []string, class, detail string) {
	k := errKey{class, detail}
	if _, ok := s.errors[k]; !ok && len(s.errors) >= maxErrorKeys {
		k.detail = detailOther
	}
	s.errors[k]++
	if class == ClassTransport && s.setups > 0 {
		// an outage is of a server that was up: one never reached
		// is the run's failure
		s.outage.downLocked(time.Now())
		s.lastTransport = detail
	}
	if len(names) > 0 && names[0] == SetupSeries {
		s.setupErrs[k]++
	}
	for _, n := range names {
		s.seriesCountsLocked(n).errors++
	}
	if isRequestSeries(names) {
		s.reqErrs++
	}
}

// sentIn counts n requests sent in each of the named series.
func (s *stats) sentIn(names []string, n int64) {
	s.mu.Lock()
	for _, name := range names {
		s.seriesCountsLocked(name).requests += n
	}
	s.mu.Unlock()
}

// seriesCountsLocked returns the counts of series name; s.mu is held.
func (s *stats) seriesCountsLocked(name string) *seriesCounts {
	c := s.counts[name]
	if c == nil {
		c = &seriesCounts{}
		s.counts[name] = c
	}
	return c
}

// failErr counts a failed exchange of the named series by its reason.
func (s *stats) failErr(ctx context.Context, names []string, err error) {
	class, detail := reason(ctx, err)
	s.fail(names, class, detail)
}

// errorLine renders one error count for the text report.
func errorLine(e ErrorCount) string {
	name := e.Class
	if e.Detail != "" {
		name += ": " + e.Detail
	}
	return fmt.Sprintf("  %-60s %d", name, e.Count)
}
