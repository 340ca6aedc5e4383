package capture

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonstr"
)

// stdJSON encodes v as encoding/json does, without HTML escaping, with
// each string then written as the tape writes strings (jsonstr.AppendString:
// no escape beyond what JSON requires, U+FFFD for invalid bytes), which is
// how appendJSON writes them.
func stdJSON(t testing.TB, v any) string {
	t.Helper()
	b := marshalData(v)
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			out = append(out, b[i])
			continue
		}
		j := i + 1
		for ; b[j] != '"'; j++ {
			if b[j] == '\\' {
				j++
			}
		}
		var s string
		if err := json.Unmarshal(b[i:j+1], &s); err != nil {
			t.Fatalf("%s: %v", b[i:j+1], err)
		}
		out = jsonstr.AppendString(out, s)
		i = j
	}
	return string(out)
}

// checkDataValid fails unless b keeps the promise of tape.Record.DataValid,
// under which the tape writer stores the event without checking it: one
// valid JSON value in valid UTF-8, no line break, no white space around it.
func checkDataValid(t testing.TB, b []byte) {
	t.Helper()
	if !json.Valid(b) || !utf8.Valid(b) || bytes.ContainsAny(b, "\n\r") || len(b) == 0 || strings.TrimSpace(string(b)) != string(b) {
		t.Fatalf("event data breaks the DataValid promise: %q", b)
	}
}

func TestHTTPEventJSON(t *testing.T) {
	tests := []HTTPEvent{
		{},
		{Phase: "response", Method: "POST", Path: "/mcp?x=<redacted:1-1>&y", Host: "127.0.0.1:8931", Conn: 3, Status: 200,
			ContentType: "text/event-stream", WaitNs: 1234,
			RequestHeaders:  http.Header{"Accept": {"application/json, text/event-stream"}, "Authorization": {"Bearer <redacted:8-15>"}, "X-Empty": {}, "X-Nil": nil},
			ResponseHeaders: http.Header{"Mcp-Session-Id": {"s"}, "Set-Cookie": {"a", "b"}}},
		{Phase: "end", Method: "GET", Path: "/", DurationNs: -5, ClosedBy: "client", RequestBytes: 1, ResponseBytes: 2, Batch: 3,
			Messages: 4, Events: 5, Comments: 6, LastEventID: "e\"1", RequestBody: "code=<redacted:1-1>&x=é", Body: "bad \x00 \xff \u2028 \t\n\r\\ é 😀", Error: "boom"},
	}
	for i, e := range tests {
		got, want := string(e.appendJSON(nil)), stdJSON(t, &e)
		checkDataValid(t, []byte(got))
		if got != want {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// FuzzHTTPEventJSON: the hand-written encoder writes exactly what
// encoding/json writes, for any strings (but for their escapes: see stdJSON).
func FuzzHTTPEventJSON(f *testing.F) {
	f.Add("POST", "/mcp?a=1", "Mcp-Session-Id", "abc", "err \x00\xff<>&\u2028", int64(200))
	f.Add("", "", "", "", "", int64(0))
	f.Add("GET", "/\"\\", "X", "é😀", "\t\n", int64(-1))
	f.Fuzz(func(t *testing.T, method, path, hname, hvalue, text string, n int64) {
		e := HTTPEvent{Phase: "end", Method: method, Path: path, Host: text, Conn: uint64(n), Status: int(n),
			RequestHeaders: http.Header{hname: {hvalue, text}}, WaitNs: n, ClosedBy: text, LastEventID: hvalue, RequestBody: hvalue, Body: text, Error: path}
		got := string(e.appendJSON(nil))
		checkDataValid(t, []byte(got))
		if want := stdJSON(t, &e); got != want {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
		var back HTTPEvent
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		plain := true // strings that come back as they went: valid UTF-8 (U+2028/9 are fine too)
		for _, s := range []string{method, path, hname, hvalue, text} {
			plain = plain && utf8.ValidString(s)
		}
		if plain {
			back.RequestHeaders, e.RequestHeaders = nil, nil
			if !reflect.DeepEqual(back, e) {
				t.Fatalf("round trip: %+v, want %+v", back, e)
			}
		}
	})
}
