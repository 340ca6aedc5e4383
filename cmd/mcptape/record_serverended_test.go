package main

import (
	"bufio"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestRecordServerEndedLegacyEverything records, through the HTTP proxy,
// a legacy HTTP+SSE session with the real server-everything: the client
// starts a long-running tool call (its POST is accepted, its answer is to
// come on the event stream), then the server goes away and its event
// stream ends. The server ended the session with the call in flight: every
// output says broken_off (the server's doing, a failure), none never
// answered. When the recorder stops instead, cutting the stream, the call
// is cut_by_shutdown (not the server's doing): the session's close said
// stream-ended by the proxy, and the call was never answered.
func TestRecordServerEndedLegacyEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	t.Run("server ends", func(t *testing.T) {
		tp := recordLegacyCall(t, func(srv *peertest.Process, run *httpRecordRun, events <-chan string) {
			srv.Stop()
			for range events { // to the end of the stream the server ended
			}
			if err := run.stop(); err != nil {
				t.Fatal(err)
			}
		})
		outcomeEverywhere(t, tp, "server", "tools/call", "broken_off", "broken_off", 1, true)
	})
	t.Run("recorder stops", func(t *testing.T) {
		tp := recordLegacyCall(t, func(_ *peertest.Process, run *httpRecordRun, events <-chan string) {
			if err := run.stop(); err != nil {
				t.Fatal(err)
			}
			for range events { // to the end of the stream the recorder cut
			}
		})
		outcomeEverywhere(t, tp, "proxy", "tools/call", "cut_by_shutdown", "cut_by_shutdown", 0, false)
	})
}

// recordLegacyCall records a legacy HTTP+SSE session with server-everything
// through the proxy, the client's long-running tool call in flight, ended
// by end (given the event stream's data lines), and returns the tape.
func recordLegacyCall(t *testing.T, end func(*peertest.Process, *httpRecordRun, <-chan string)) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := peertest.EverythingSSE(t, ctx)
	tp := filepath.Join(t.TempDir(), "ended.jsonl.zst")
	run := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", srv.URL, "-o", tp)
	base := strings.TrimSuffix(strings.TrimSuffix(run.url, "/"), "/sse")

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string, 16) // the data lines of the stream
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	next := func(what string) string {
		select {
		case d, ok := <-events:
			if ok {
				return d
			}
		case <-ctx.Done():
		}
		t.Fatalf("the event stream ended before %s", what)
		return ""
	}
	endpoint := next("the endpoint")
	post := func(body string) {
		resp, err := http.Post(base+endpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %s", body, resp.Status)
		}
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if d := next("the initialize answer"); !strings.Contains(d, `"id":1`) {
		t.Fatalf("first message %s, want the initialize answer", d)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":3}}}`)
	time.Sleep(300 * time.Millisecond) // the call is running
	end(srv, run, events)
	return tp
}
