package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

const (
	initFrame   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	inittedNote = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func echoFrame(id int, msg string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, msg)
}

func toolFrame(id int, name string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"_meta":{"progressToken":"tok-%d"}}}`, id, name, id)
}

func dialFake(t *testing.T, f *fakeServer, opts ...Option) *HTTPConn {
	t.Helper()
	c, err := DialHTTP(context.Background(), f.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustSend(t *testing.T, c Conn, frame []byte) *Exchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	ex, err := c.Send(ctx, frame, SendOptions{})
	if err != nil {
		t.Fatalf("Send(%.80s): %v", frame, err)
	}
	return ex
}

func waitDone(t *testing.T, ex *Exchange) {
	t.Helper()
	select {
	case <-ex.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("exchange %d not done", ex.ID)
	}
}

func TestHTTPSessionLifecycle(t *testing.T) {
	for _, tt := range []struct {
		name         string
		sse, priming bool
	}{
		{"json", false, false},
		{"sse", true, false},
		{"sse-priming", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, func(f *fakeServer) { f.sse, f.priming = tt.sse, tt.priming })
			c := dialFake(t, f, WithHeader(http.Header{"authorization": {"Bearer x"}, "Host": {"mcp.example:8080"}}))

			ex := mustSend(t, c, []byte(initFrame))
			answer := recvAnswer(t, c, "0")
			if answer.Exchange != ex.ID || answer.Stream != StreamPOST {
				t.Errorf("answer metadata %+v, want exchange %d on the POST stream", answer, ex.ID)
			}
			if c.SessionID() != "session-1" || c.ProtocolVersion() != "2025-06-18" {
				t.Fatalf("session %q version %q after initialize", c.SessionID(), c.ProtocolVersion())
			}
			wantType := "application/json"
			if tt.sse {
				wantType = "text/event-stream"
			}
			if ex.Status != 200 || ex.ContentType != wantType || ex.Header.Get(HeaderSessionID) != "session-1" {
				t.Errorf("initialize exchange: status %d type %q header %v", ex.Status, ex.ContentType, ex.Header)
			}

			ex = mustSend(t, c, []byte(inittedNote))
			waitDone(t, ex)
			if ex.Status != http.StatusAccepted || ex.Frames() != 0 || ex.Err() != nil {
				t.Errorf("notification: status %d, %d frames, err %v", ex.Status, ex.Frames(), ex.Err())
			}

			ex = mustSend(t, c, echoFrame(1, "hi"))
			in := recvAnswer(t, c, "1")
			if !strings.Contains(string(in.Frame), `"text":"hi"`) {
				t.Errorf("echo answer %s", in.Frame)
			}
			waitDone(t, ex)
			if ex.Frames() != 1 || ex.Ended().Before(ex.Responded) {
				t.Errorf("echo exchange: %d frames, ended %v", ex.Frames(), ex.Ended())
			}

			if tt.sse {
				ex = mustSend(t, c, toolFrame(2, "progress"))
				var ids []string
				for i := 0; i < 3; i++ {
					in := recvTimeout(t, c, 10*time.Second)
					if in.Exchange != ex.ID {
						t.Errorf("frame from exchange %d, want %d", in.Exchange, ex.ID)
					}
					ids = append(ids, in.EventID)
					if i < 2 && jsonrpc.Classify(in.Frame).Method != "notifications/progress" {
						t.Errorf("frame %d = %s, want progress", i, in.Frame)
					}
				}
				if got := strings.Join(ids, ","); got != "ev-1,ev-2,ev-3" {
					t.Errorf("event ids %s", got)
				}
				waitDone(t, ex)
				if ex.Frames() != 3 || ex.Err() != nil {
					t.Errorf("progress exchange: %d frames, err %v", ex.Frames(), ex.Err())
				}
			}

			// What the server saw.
			hs := f.postHeaders()
			if hs[0].Get(HeaderSessionID) != "" || hs[0].Get(HeaderProtocolVersion) != "" {
				t.Errorf("initialize carried session/version headers: %v", hs[0])
			}
			for i, h := range hs[1:] {
				if h.Get(HeaderSessionID) != "session-1" || h.Get(HeaderProtocolVersion) != "2025-06-18" || h.Get("Authorization") != "Bearer x" || h.Get("X-Host") != "mcp.example:8080" {
					t.Errorf("POST %d headers %v", i+1, h)
				}
				if h.Get(HeaderMethod) != "" {
					t.Errorf("POST %d carries Mcp-Method before 2026-07-28", i+1)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if got := f.deletedSessions(); len(got) != 1 || got[0] != "session-1" {
				t.Errorf("DELETEs %v", got)
			}
		})
	}
}

func TestHTTPSessionExpired(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f := newFakeServer(t, func(f *fakeServer) { f.expired = status })
			c := dialFake(t, f)
			mustSend(t, c, []byte(initFrame))
			recvAnswer(t, c, "0")
			f.mu.Lock()
			clear(f.sessions) // the server restarted
			f.mu.Unlock()

			ex, err := c.Send(context.Background(), echoFrame(1, "x"), SendOptions{})
			if !errors.Is(err, ErrSessionExpired) {
				t.Fatalf("Send = %v, want ErrSessionExpired", err)
			}
			var se *StatusError
			if !errors.As(err, &se) || se.Status != status || ex == nil || ex.Status != status || len(ex.Body) == 0 {
				t.Fatalf("error %v, exchange %+v", err, ex)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			if c.SessionID() != "" {
				t.Errorf("session %q kept after expiry", c.SessionID())
			}
			if status == http.StatusBadRequest { // a JSON-RPC body is delivered too
				in := recvTimeout(t, c, time.Second)
				if jsonrpc.Classify(in.Frame).Kind != jsonrpc.KindError || in.Exchange != ex.ID {
					t.Errorf("delivered %s", in.Frame)
				}
			}
			// Initialize again: a new session, and calls work.
			mustSend(t, c, []byte(initFrame))
			recvAnswer(t, c, "0")
			if c.SessionID() != "session-2" {
				t.Fatalf("new session %q", c.SessionID())
			}
			mustSend(t, c, echoFrame(2, "y"))
			recvAnswer(t, c, "2")
		})
	}
}

func TestHTTPErrorStatuses(t *testing.T) {
	f := newFakeServer(t, nil)
	c := dialFake(t, f)
	mustSend(t, c, []byte(initFrame))
	recvAnswer(t, c, "0")

	// A batch refused with 400 and a JSON-RPC error: not an expiry.
	_, err := c.Send(context.Background(), []byte(`[`+string(echoFrame(1, "a"))+`,`+string(echoFrame(2, "b"))+`]`), SendOptions{})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 400 || errors.Is(err, ErrSessionExpired) {
		t.Fatalf("batch: %v", err)
	}
	in := recvTimeout(t, c, time.Second)
	if info := jsonrpc.Classify(in.Frame); !info.HasErrorCode || info.ErrorCode != -32700 {
		t.Errorf("batch answer %s", in.Frame)
	}
	// A header the caller sets wins: a bogus session id.
	_, err = c.Send(context.Background(), echoFrame(3, "c"), SendOptions{Header: http.Header{"mcp-session-id": {"bogus"}}})
	if !errors.Is(err, ErrSessionExpired) {
		t.Errorf("bogus session: %v", err)
	}
	if c.SessionID() != "session-1" {
		t.Errorf("a bogus per-send session id made the connection forget its own")
	}
}

func TestHTTPUnexpectedContentType(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	c, err := DialHTTP(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ex, err := c.Send(context.Background(), echoFrame(1, "x"), SendOptions{})
	if err == nil || !strings.Contains(err.Error(), "text/plain") || ex == nil || string(ex.Body) != "hello" {
		t.Fatalf("Send = %v, exchange %+v", err, ex)
	}
}

func TestHTTPStreamEnds(t *testing.T) {
	tests := []struct {
		tool    string
		wantErr func(error) bool
	}{
		{"cut", func(err error) bool { return errors.Is(err, errCutEvent) }},
		{"abort", func(err error) bool { return err != nil && strings.Contains(err.Error(), "reading the event stream") }},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			f := newFakeServer(t, func(f *fakeServer) { f.sse = true })
			c := dialFake(t, f)
			mustSend(t, c, []byte(initFrame))
			recvAnswer(t, c, "0")
			ex := mustSend(t, c, toolFrame(1, tt.tool))
			in := recvTimeout(t, c, 5*time.Second)
			if jsonrpc.Classify(in.Frame).Method != "notifications/message" {
				t.Errorf("frame %s", in.Frame)
			}
			waitDone(t, ex)
			if ex.Frames() != 1 || !tt.wantErr(ex.Err()) {
				t.Errorf("exchange: %d frames, err %v", ex.Frames(), ex.Err())
			}
			// The half event was not delivered.
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if in, err := c.Recv(ctx); err == nil {
				t.Errorf("unexpected frame %s", in.Frame)
			}
		})
	}
}

func TestHTTPCancelClosesStream(t *testing.T) {
	for _, how := range []string{"CloseStream", "context"} {
		t.Run(how, func(t *testing.T) {
			f := newFakeServer(t, func(f *fakeServer) { f.sse = true })
			c := dialFake(t, f)
			mustSend(t, c, []byte(initFrame))
			recvAnswer(t, c, "0")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ex, err := c.Send(ctx, toolFrame(1, "hang"), SendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := ErrStreamClosed
			if how == "CloseStream" {
				ex.CloseStream()
			} else {
				cancel()
				want = context.Canceled
			}
			waitDone(t, ex)
			if !errors.Is(ex.Err(), want) {
				t.Errorf("exchange err %v, want %v", ex.Err(), want)
			}
			select {
			case <-f.hangDone: // the server saw the stream close
			case <-time.After(5 * time.Second):
				t.Fatal("the server did not see the stream close")
			}
		})
	}
}

func TestHTTPHangingServerTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := DialHTTP(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	ex, err := c.Send(ctx, echoFrame(1, "x"), SendOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || ex != nil {
		t.Fatalf("Send = %v, %v; want a deadline error and no exchange", ex, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestHTTPGetStream(t *testing.T) {
	f := newFakeServer(t, func(f *fakeServer) { f.sse = true })
	c := dialFake(t, f, WithGetStream())
	mustSend(t, c, []byte(initFrame))
	recvAnswer(t, c, "0")
	mustSend(t, c, []byte(inittedNote))
	deadline := time.Now().Add(5 * time.Second)
	for c.GetStream() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	get := c.GetStream()
	if get == nil || get.Method != "GET" || get.Status != 200 {
		t.Fatalf("GET stream %+v", get)
	}
	f.push <- `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`
	in := recvTimeout(t, c, 5*time.Second)
	if in.Stream != StreamGET || in.Exchange != get.ID || in.EventID != "get-1" {
		t.Errorf("GET frame metadata %+v", in)
	}
	if _, err := c.OpenGetStream(context.Background(), SendOptions{}); err == nil {
		t.Error("a second GET stream was opened")
	}
	c.Close()
	waitDone(t, get)
	if !errors.Is(get.Err(), ErrClosed) {
		t.Errorf("GET stream err after Close: %v", get.Err())
	}
}

func TestHTTPGetStreamNotOffered(t *testing.T) {
	f := newFakeServer(t, func(f *fakeServer) { f.stateful = false })
	c := dialFake(t, f)
	ex, err := c.OpenGetStream(context.Background(), SendOptions{})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusMethodNotAllowed || ex.Status != 405 {
		t.Fatalf("OpenGetStream = %v", err)
	}
}

func TestHTTPStateless2026(t *testing.T) {
	f := newFakeServer(t, func(f *fakeServer) { f.stateful = false })
	c := dialFake(t, f)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	frames := []struct {
		frame, wantName string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m"},` + meta + `}}`, "echo"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta + `,"name":"héllo wörld"}}`, "=?base64?aMOpbGxvIHfDtnJsZA==?="},
		{`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///a b",` + meta + `}}`, "file:///a b"},
		{`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":" padded ",` + meta + `}}`, "=?base64?IHBhZGRlZCA=?="},
	}
	for i, fr := range frames {
		ex := mustSend(t, c, []byte(fr.frame))
		in := recvTimeout(t, c, 5*time.Second)
		if info := jsonrpc.Classify(in.Frame); info.Kind != jsonrpc.KindResponse {
			t.Errorf("frame %d: answer %s (status %d)", i, in.Frame, ex.Status)
		}
		h := f.postHeaders()[i]
		if h.Get(HeaderName) != fr.wantName || h.Get(HeaderSessionID) != "" {
			t.Errorf("frame %d: Mcp-Name %q (want %q), session %q", i, h.Get(HeaderName), fr.wantName, h.Get(HeaderSessionID))
		}
	}
	// Without _meta, WithProtocolVersion gives the version.
	c2 := dialFake(t, f, WithProtocolVersion("2026-07-28"))
	_, err := c2.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`), SendOptions{})
	if err == nil {
		t.Error("the fake server accepted a request without _meta") // its check compares with _meta
	}
	hs := f.postHeaders()
	if h := hs[len(hs)-1]; h.Get(HeaderProtocolVersion) != "2026-07-28" || h.Get(HeaderMethod) != "tools/list" {
		t.Errorf("headers from WithProtocolVersion: %v", h)
	}
	if err := c.Close(); err != nil || len(f.deletedSessions()) != 0 {
		t.Errorf("Close = %v, DELETEs %v (want none without a session)", err, f.deletedSessions())
	}
}

func TestHTTPCloseUnblocks(t *testing.T) {
	f := newFakeServer(t, func(f *fakeServer) { f.sse = true })
	c := dialFake(t, f)
	mustSend(t, c, []byte(initFrame))
	recvAnswer(t, c, "0")
	hang := mustSend(t, c, toolFrame(1, "hang"))
	recvErr := make(chan error, 1)
	go func() {
		_, err := c.Recv(context.Background())
		recvErr <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-recvErr:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Recv = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Recv still blocked")
	}
	waitDone(t, hang)
	if !errors.Is(hang.Err(), ErrClosed) {
		t.Errorf("open stream ended with %v", hang.Err())
	}
	if _, err := c.Send(context.Background(), echoFrame(2, "x"), SendOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestHTTPManyEventsKeepOrder(t *testing.T) {
	const n = 3 * streamQueueLimit
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range n {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"i\":%d}}\n\n", i)
		}
	}))
	defer srv.Close()
	c, err := DialHTTP(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ex := mustSend(t, c, echoFrame(1, "x"))
	time.Sleep(50 * time.Millisecond) // let the reader fill the queue and wait
	for i := range n {
		in := recvTimeout(t, c, 5*time.Second)
		if want := fmt.Sprintf(`"i":%d}`, i); !strings.Contains(string(in.Frame), want) {
			t.Fatalf("frame %d = %s", i, in.Frame)
		}
	}
	waitDone(t, ex)
	if ex.Frames() != n || ex.Err() != nil {
		t.Errorf("%d frames, err %v", ex.Frames(), ex.Err())
	}
}

func TestHTTPMaxFrame(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
	for _, sse := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: "+big+"\n\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, big)
		}))
		c, err := DialHTTP(context.Background(), srv.URL, WithMaxFrame(1000))
		if err != nil {
			t.Fatal(err)
		}
		mustSend(t, c, echoFrame(1, "x"))
		in := recvTimeout(t, c, 5*time.Second)
		if !in.Truncated || len(in.Frame) != 1000 || string(in.Frame) != big[:1000] {
			t.Errorf("sse=%v: %d bytes, truncated %v", sse, len(in.Frame), in.Truncated)
		}
		c.Close()
		srv.Close()
	}
}
