package analysis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// The HAR export follows HTTP Archive 1.2
// (http://www.softwareishard.com/blog/har-12-spec/). What the tape does not
// record is filled in as the spec allows: httpVersion "HTTP/1.1", no
// cookies, headersSize -1, send time 0. Fields of our own start with "_":
// _session, _exchange, _stream, _closedBy, _error, _incomplete, and for a
// WebSocket connection _resourceType and _webSocketMessages (har_ws.go).
//
// Request bodies are the client's messages (batch members put back into an
// array), or for a plain HTTP exchange (OAuth, discovery) the "end" event's
// request_body; response bodies are the server's messages: the JSON body, or for
// an event stream the SSE text rebuilt from the recorded events (id and data
// lines, endpoint, priming and retry events), which is faithful in content
// but not byte for byte. A body longer than harMaxBody is cut, with a
// comment saying so.

// harMaxBody bounds the text kept for one request or response body.
const harMaxBody = 4 << 20

// harEvent is the part of an "http" event a HAR entry needs.
type harEvent struct {
	httpEvent
	Host          string `json:"host"`
	WaitNS        int64  `json:"wait_ns"`
	RequestBytes  int64  `json:"request_bytes"`
	ResponseBytes int64  `json:"response_bytes"`
	Body          string `json:"body"`
	RequestBody   string `json:"request_body"` // a plain (not MCP) exchange's request body, redacted
}

// sseNote is the part of an "sse" event (an SSE event without a message)
// the HAR export rebuilds.
type sseNote struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	RetryMs  *int64 `json:"retry_ms"`
	Comments int    `json:"comments"`
	Data     string `json:"data"`
}

// harExchange gathers one HTTP exchange until its end.
type harExchange struct {
	id       uint64
	session  string
	stream   string
	first    int64 // time of its first record
	req      [][]byte
	resp     bytes.Buffer // response text so far
	respMsgs int
	sse      bool // response written as SSE text
	cut      bool
	respAt   int64
	head     *harEvent // "response" event
	end      *harEvent // "end" event
	endAt    int64
	errs     []string
	ws       []harWSMessage // a WebSocket connection's frames (har_ws.go)
	parts    harParts       // parts of answers streamed as several results
}

// harWriter streams a HAR document.
type harWriter struct {
	w       *bufio.Writer
	scheme  string
	host    string
	open    map[uint64]*harExchange
	entries int64
}

func exportHAR(sc *Scanner, h *tape.Header, w io.Writer, st *ExportStats) error {
	hw := &harWriter{w: bufio.NewWriter(w), scheme: "http", open: map[uint64]*harExchange{}}
	if u, err := url.Parse(h.Target); err == nil && u.Host != "" {
		hw.scheme, hw.host = u.Scheme, u.Host
	}
	creator, _ := json.Marshal(map[string]string{"name": or(h.Tool, "mcptape"), "version": or(h.Version, "unknown")})
	fmt.Fprintf(hw.w, "{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"creator\": %s,\n    \"entries\": [", creator)
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		rec := it.Rec
		if rec.Exchange == 0 || it.Member >= 0 {
			continue
		}
		x := hw.exchange(rec)
		switch {
		case it.IsMessage() && rec.Stream == tape.StreamWS:
			st.Messages++
			x.addWS(rec, 1, string(rec.Frame))
		case rec.Event == tape.EventWS:
			x.addWSEvent(rec)
		case it.IsMessage():
			st.Messages++
			if rec.Dir == tape.ClientToServer {
				x.addRequest(rec.Frame)
			} else {
				x.addResponse(rec)
			}
		case rec.Event == tape.EventHTTP:
			var ev harEvent
			if json.Unmarshal(rec.Data, &ev) != nil {
				continue
			}
			if ev.Phase == "end" {
				x.end, x.endAt = &ev, rec.Time
				if err := hw.entry(x); err != nil {
					return err
				}
				delete(hw.open, x.id)
			} else {
				x.head, x.respAt = &ev, rec.Time
				x.sse = isEventStream(ev.ContentType)
			}
		case rec.Event == "sse":
			var n sseNote
			if json.Unmarshal(rec.Data, &n) == nil {
				x.addNote(&n)
			}
		case rec.Event == tape.EventError:
			var e struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(rec.Data, &e) == nil && len(x.errs) < 8 {
				x.errs = append(x.errs, e.Error)
			}
		}
	}
	// Exchanges the tape ends inside of, in their order.
	left := make([]*harExchange, 0, len(hw.open))
	for _, x := range hw.open {
		left = append(left, x)
	}
	slices.SortFunc(left, func(a, b *harExchange) int { return int(a.id) - int(b.id) })
	for _, x := range left {
		if err := hw.entry(x); err != nil {
			return err
		}
	}
	if hw.entries > 0 {
		hw.w.WriteString("\n    ")
	}
	hw.w.WriteString("]\n  }\n}\n")
	st.Entries = hw.entries
	return hw.w.Flush()
}

func isEventStream(ctype string) bool {
	mt, _, _ := mime.ParseMediaType(ctype)
	return mt == "text/event-stream"
}

// exchange returns the state of the exchange rec belongs to.
func (hw *harWriter) exchange(rec *tape.Record) *harExchange {
	x := hw.open[rec.Exchange]
	if x == nil {
		x = &harExchange{id: rec.Exchange, first: rec.Time}
		hw.open[rec.Exchange] = x
	}
	if x.session == "" {
		x.session = rec.Session
	}
	if x.stream == "" {
		x.stream = rec.Stream
	}
	return x
}

func (x *harExchange) addRequest(frame []byte) {
	if len(x.req) < 10000 {
		x.req = append(x.req, frame)
	}
}

// write appends s to the response text, up to harMaxBody.
func (x *harExchange) write(s ...string) {
	for _, p := range s {
		if x.resp.Len()+len(p) > harMaxBody {
			x.cut = true
			return
		}
		x.resp.WriteString(p)
	}
}

func (x *harExchange) addResponse(rec *tape.Record) {
	x.respMsgs++
	x.parts.add(rec)
	if !x.sse {
		if x.respMsgs > 1 {
			x.write(",")
		}
		x.write(string(rec.Frame))
		return
	}
	if rec.EventID != "" {
		x.write("id: ", rec.EventID, "\n")
	}
	for _, l := range strings.Split(string(rec.Frame), "\n") {
		x.write("data: ", l, "\n")
	}
	x.write("\n")
}

func (x *harExchange) addNote(n *sseNote) {
	switch n.Kind {
	case "endpoint":
		x.write("event: endpoint\ndata: ", n.Data, "\n\n")
	case "priming", "empty":
		if n.ID != "" {
			x.write("id: ", n.ID, "\n")
		}
		x.write("data: \n\n")
	case "retry":
		if n.RetryMs != nil {
			x.write("retry: ", strconv.FormatInt(*n.RetryMs, 10), "\n\n")
		}
	case "comment":
		for range min(n.Comments, 100) {
			x.write(":\n")
		}
		x.write("\n")
	}
}

// HAR 1.2 objects, in the order of the spec.
type (
	harEntry struct {
		StartedDateTime string      `json:"startedDateTime"`
		Time            float64     `json:"time"`
		Request         harRequest  `json:"request"`
		Response        harResponse `json:"response"`
		Cache           struct{}    `json:"cache"`
		Timings         harTimings  `json:"timings"`
		Session         string      `json:"_session,omitempty"`
		Exchange        uint64      `json:"_exchange"`
		Stream          string      `json:"_stream,omitempty"`
		ClosedBy        string      `json:"_closedBy,omitempty"`
		Error           string      `json:"_error,omitempty"`
		Incomplete      bool        `json:"_incomplete,omitempty"`
		// A WebSocket connection (har_ws.go).
		ResourceType      string         `json:"_resourceType,omitempty"`
		WebSocketMessages []harWSMessage `json:"_webSocketMessages,omitempty"`
		Streamed          *harStream     `json:"_streamed,omitempty"`
	}
	harRequest struct {
		Method      string       `json:"method"`
		URL         string       `json:"url"`
		HTTPVersion string       `json:"httpVersion"`
		Cookies     []struct{}   `json:"cookies"`
		Headers     []harNV      `json:"headers"`
		QueryString []harNV      `json:"queryString"`
		PostData    *harPostData `json:"postData,omitempty"`
		HeadersSize int          `json:"headersSize"`
		BodySize    int64        `json:"bodySize"`
	}
	harPostData struct {
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Comment  string `json:"comment,omitempty"`
	}
	harResponse struct {
		Status      int        `json:"status"`
		StatusText  string     `json:"statusText"`
		HTTPVersion string     `json:"httpVersion"`
		Cookies     []struct{} `json:"cookies"`
		Headers     []harNV    `json:"headers"`
		Content     harContent `json:"content"`
		RedirectURL string     `json:"redirectURL"`
		HeadersSize int        `json:"headersSize"`
		BodySize    int64      `json:"bodySize"`
	}
	harContent struct {
		Size     int64  `json:"size"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text,omitempty"`
		Comment  string `json:"comment,omitempty"`
	}
	harTimings struct {
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
	}
	harNV struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
)

// entry writes the HAR entry of a finished (or abandoned) exchange.
func (hw *harWriter) entry(x *harExchange) error {
	ev := x.end
	if ev == nil {
		ev = x.head
	}
	if ev == nil {
		ev = &harEvent{}
	}
	head := x.head
	if head == nil {
		head = ev
	}
	e := harEntry{Session: x.session, Exchange: x.id, Stream: x.stream, Incomplete: x.end == nil}
	// Times: the request arrived wait before its response headers, or
	// duration before its end.
	start, wait, total := x.first, int64(0), int64(0)
	switch {
	case x.head != nil && x.head.WaitNS > 0:
		start, wait = x.respAt-x.head.WaitNS, x.head.WaitNS
	case x.end != nil && x.end.DurationNS > 0:
		start = x.endAt - x.end.DurationNS
	}
	if x.end != nil {
		total = max(x.end.DurationNS, x.endAt-start)
	} else {
		total = max(x.respAt-start, 0)
	}
	if x.head == nil {
		wait = total
	}
	e.StartedDateTime = time.Unix(0, start).UTC().Format("2006-01-02T15:04:05.000Z")
	e.Timings = harTimings{Send: 0, Wait: harMS(wait), Receive: harMS(max(total-wait, 0))}
	e.Time = e.Timings.Send + e.Timings.Wait + e.Timings.Receive
	if x.end != nil {
		e.ClosedBy, e.Error = x.end.ClosedBy, x.end.Error
	}
	if e.Error == "" && len(x.errs) > 0 {
		e.Error = strings.Join(x.errs, "; ")
	}
	reqHeaders := head.RequestHeaders
	if reqHeaders == nil {
		reqHeaders = ev.RequestHeaders
	}
	host := or(head.Host, or(ev.Host, or(headerValue(reqHeaders, "host"), hw.host)))
	path := or(head.Path, ev.Path)
	e.Request = harRequest{Method: or(head.Method, ev.Method), URL: hw.scheme + "://" + host + path,
		HTTPVersion: "HTTP/1.1", Cookies: []struct{}{}, Headers: harHeaders(reqHeaders),
		QueryString: harQuery(path), HeadersSize: -1, BodySize: ev.RequestBytes}
	if len(x.req) > 0 || ev.RequestBody != "" {
		text := ev.RequestBody
		switch {
		case len(x.req) == 1:
			text = string(x.req[0])
		case len(x.req) > 1:
			text = "[" + string(bytes.Join(x.req, []byte(","))) + "]"
		}
		pd := &harPostData{MimeType: or(headerValue(reqHeaders, "content-type"), "application/json"), Text: text}
		if len(text) > harMaxBody {
			pd.Text, pd.Comment = text[:harMaxBody], "cut by mcptape"
		}
		e.Request.PostData = pd
		if e.Request.BodySize == 0 {
			e.Request.BodySize = int64(len(text))
		}
	}
	status := head.Status
	if status == 0 {
		status = ev.Status
	}
	text := x.resp.String()
	if !x.sse && x.respMsgs > 1 {
		text = "[" + text + "]"
	}
	if text == "" {
		text = ev.Body
	}
	ctype := or(head.ContentType, or(ev.ContentType, "x-unknown"))
	e.Response = harResponse{Status: status, StatusText: statusText(status), HTTPVersion: "HTTP/1.1",
		Cookies: []struct{}{}, Headers: harHeaders(head.ResponseHeaders), RedirectURL: "", HeadersSize: -1,
		BodySize: ev.ResponseBytes, Content: harContent{Size: int64(len(text)), MimeType: ctype, Text: text}}
	if e.Response.BodySize == 0 {
		e.Response.BodySize = int64(len(text))
	}
	if x.sse {
		e.Response.Content.Comment = "event stream rebuilt from the recorded events"
	}
	e.Streamed = x.parts.har(start)
	if x.cut {
		e.Response.Content.Comment = "cut by mcptape after " + strconv.Itoa(harMaxBody) + " bytes"
	}
	x.wsEntry(&e)
	b, err := json.MarshalIndent(&e, "      ", "  ")
	if err != nil {
		return err
	}
	if hw.entries > 0 {
		hw.w.WriteByte(',')
	}
	hw.w.WriteString("\n      ")
	hw.w.Write(b)
	hw.entries++
	return nil
}

// harMS converts nanoseconds to HAR milliseconds (microsecond precision).
func harMS(ns int64) float64 { return float64(ns/1000) / 1000 }

func statusText(code int) string {
	if code == 0 {
		return ""
	}
	return http.StatusText(code)
}

// harHeaders turns a recorded header map into HAR name/value pairs, sorted.
func harHeaders(h map[string]json.RawMessage) []harNV {
	out := []harNV{}
	for name, raw := range h {
		for _, v := range headerValues(raw) {
			out = append(out, harNV{Name: name, Value: v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// headerValues reads one recorded header: a list of strings or a string.
func headerValues(raw json.RawMessage) []string {
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	return nil
}

// headerValue returns the first value of header name (lower case) in h.
func headerValue(h map[string]json.RawMessage, name string) string {
	for k, raw := range h {
		if strings.EqualFold(k, name) {
			if v := headerValues(raw); len(v) > 0 {
				return v[0]
			}
		}
	}
	return ""
}

// harQuery lists the query parameters of a path.
func harQuery(path string) []harNV {
	out := []harNV{}
	_, q, ok := strings.Cut(path, "?")
	if !ok {
		return out
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return out
	}
	for name, vs := range vals {
		for _, v := range vs {
			out = append(out, harNV{Name: name, Value: v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
