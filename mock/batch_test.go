package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// Frames of batchServer.
const (
	batchInit     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	batchInitResp = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"u","version":"1"}}}`
	batchBody     = `[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"resources/list"}]`
	batchResp2    = `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`
	batchResp3    = `{"jsonrpc":"2.0","id":3,"result":{"resources":[]}}`
)

// batchServer is a Streamable HTTP server that answers initialize with
// JSON and the batch of batchBody in shape.
func batchServer(shape BatchShape) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set(sessionHeader, "sess-1")
		switch {
		case r.Method != http.MethodPost:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		case string(body) == batchInit:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, batchInitResp)
		case string(body) != batchBody:
			w.WriteHeader(http.StatusAccepted)
		case shape == BatchJSON:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "["+batchResp2+","+batchResp3+"]")
		case shape == BatchEvents:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\nevent: message\ndata: %s\n\n", batchResp2, batchResp3)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: [%s,%s]\n\n", batchResp2, batchResp3)
		}
	})
}

// postBatch initializes a session at url and posts batchBody, and returns
// the batch answer's shape: the media type, then each unit (the JSON
// body, or each event's data) as sent.
func postBatch(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	post := func(body, session string) *http.Response { return postMCP(t, ctx, url, body, session) }
	resp := post(batchInit, "")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get(sessionHeader)
	resp = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	resp.Body.Close()
	resp = post(batchBody, session)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	media, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	got := []string{media}
	if media != "text/event-stream" {
		return append(got, compact(t, data))
	}
	for _, ev := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n\n") {
		for _, line := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				got = append(got, compact(t, []byte(strings.TrimSpace(d))))
			}
		}
	}
	return got
}

// postMCP posts body to url as a Streamable HTTP client does, in the
// session given ("": none).
func postMCP(t *testing.T, ctx context.Context, url, body, session string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(sessionHeader, session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func compact(t *testing.T, data []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	return b.String()
}

// TestMockBatchShape records a client batch through the HTTP recording
// proxy against a server that answers it as one JSON array, as one event
// per response, or as one event holding the array; RecordedBatchShape
// reads that shape from the tape, and the mock answers the same batch in
// the same shape, with the same responses.
func TestMockBatchShape(t *testing.T) {
	for _, shape := range []BatchShape{BatchJSON, BatchEvents, BatchEventArray} {
		t.Run(shape.String(), func(t *testing.T) {
			upstream := httptest.NewServer(batchServer(shape))
			defer upstream.Close()
			path := filepath.Join(t.TempDir(), "batch.jsonl.zst")
			url, stop := recordHTTP(t, upstream.URL, path)
			want := postBatch(t, url+Path)
			stop()

			r, err := tape.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := RecordedBatchShape(r)
			r.Close()
			if err != nil || !ok || got != shape {
				t.Fatalf("RecordedBatchShape = %v, %v, %v; want %v", got, ok, err, shape)
			}
			m, err := New(loadSessions(t, path), WithBatchShape(got), WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			ms := httptest.NewServer(m.HTTPHandler(HTTPConfig{}))
			defer ms.Close()
			mocked := postBatch(t, ms.URL+Path)
			if shape == BatchEvents { // members answer in any order
				slices.Sort(want[1:])
				slices.Sort(mocked[1:])
			}
			if !slices.Equal(mocked, want) {
				t.Errorf("the mock answered the batch\n  %q\nthe server\n  %q", mocked, want)
			}
		})
	}
}

// TestRecordedBatchShapeNone: a tape without an HTTP batch has no shape.
func TestRecordedBatchShapeNone(t *testing.T) {
	r, err := tape.Open(writeTape(t, "> "+batchInit, "< "+batchInitResp))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if s, ok, err := RecordedBatchShape(r); ok || err != nil {
		t.Errorf("RecordedBatchShape = %v, %v, %v; want not ok", s, ok, err)
	}
}

// TestMockBatchStreams: in the JSON shape, a batch whose playback sends
// progress before the answers turns into an event stream: the progress,
// then each response as its own event.
func TestMockBatchStreams(t *testing.T) {
	m := newMock(t, []string{
		"> " + batchInit, "< " + batchInitResp,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	}, WithMaxSpeed())
	ms := httptest.NewServer(m.HTTPHandler(HTTPConfig{}))
	defer ms.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := func(body, session string) *http.Response { return postMCP(t, ctx, ms.URL+Path, body, session) }
	resp := req(batchInit, "")
	resp.Body.Close()
	resp = req(`[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"live"}}},{"jsonrpc":"2.0","id":"b","method":"nope"}]`, resp.Header.Get(sessionHeader))
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q, want text/event-stream; body %s", ct, data)
	}
	var events []string
	for _, line := range strings.Split(string(data), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, d)
		}
	}
	if len(events) != 3 || !strings.Contains(events[0], `"progressToken":"live"`) ||
		!strings.Contains(events[1], `"id":"a"`) || !strings.Contains(events[2], `"id":"b"`) {
		t.Errorf("events %q: want the progress, then the answers to a and b, one event each", events)
	}
}
