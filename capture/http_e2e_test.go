package capture

// End-to-end tests of the HTTP recording proxy against real MCP
// implementations we did not write: server-everything and the Inspector CLI
// (TypeScript SDK), the Go SDK client and conformance everything-server,
// and an mcp-go server. Each peer runs once per test function; every
// exchange is made directly and through the proxy, the outcomes must be
// equal, and the tape must hold every message.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// e2eContext bounds an end-to-end test.
func e2eContext(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// viaProxy returns the proxy URL standing for upstream URL u (same path).
func viaProxy(rig *proxyRig, u string) string {
	pu, _ := url.Parse(u)
	return rig.url + pu.RequestURI()
}

// checkTapeComplete checks, session by session, that every request the
// client sent was answered in the tape, and with bothWays every request
// the server sent too; it returns the methods the client sent.
func checkTapeComplete(t testing.TB, recs []tape.Record, bothWays bool) []string {
	t.Helper()
	bySession := map[string][]tape.Record{}
	for _, r := range msgs(recs, "") {
		bySession[r.Session] = append(bySession[r.Session], r)
	}
	var methods []string
	for _, rs := range bySession {
		c2s := tapeMessages(t, rs, tape.ClientToServer)
		s2c := tapeMessages(t, rs, tape.ServerToClient)
		checkAnswered(t, c2s, s2c)
		if bothWays {
			checkAnswered(t, s2c, c2s)
		}
		for _, m := range c2s {
			if m.Method != "" {
				methods = append(methods, m.Method)
			}
		}
	}
	return methods
}

// TestHTTPInspectorE2E: the MCP Inspector CLI gets the same answers from
// server-everything directly and through the proxy, over Streamable HTTP
// and over legacy HTTP+SSE; the tape holds every message.
func TestHTTPInspectorE2E(t *testing.T) {
	ctx := e2eContext(t, 3*time.Minute)
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			var srv *peertest.Process
			if transport == "http" {
				srv = peertest.EverythingHTTP(t, ctx)
			} else {
				srv = peertest.EverythingSSE(t, ctx)
			}
			rig := startProxy(t, srv.URL)
			calls := [][]string{
				{"--method", "tools/list"},
				{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello through mcptape"},
			}
			for _, call := range calls {
				args := append([]string{"--transport", transport}, call...)
				var direct, proxied string
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); direct = peertest.Inspector(t, ctx, append([]string{srv.URL}, args...)...) }()
				go func() {
					defer wg.Done()
					proxied = peertest.Inspector(t, ctx, append([]string{viaProxy(rig, srv.URL)}, args...)...)
				}()
				wg.Wait()
				if direct != proxied {
					t.Fatalf("%v: outputs differ\n direct: %.300s\nproxied: %.300s", call, direct, proxied)
				}
				if !strings.Contains(strings.ToLower(direct), "echo") {
					t.Fatalf("%v: unexpected output %.300s", call, direct)
				}
			}
			rig.stop()
			recs := rig.tape.records()
			methods := checkTapeComplete(t, recs, true)
			for _, want := range []string{"initialize", "notifications/initialized", "tools/list", "tools/call"} {
				if !containsString(methods, want) {
					t.Errorf("the tape lacks %s: %v", want, methods)
				}
			}
			sessions := map[string]bool{}
			for _, m := range msgs(recs, "") {
				sessions[m.Session] = true
				if strings.HasPrefix(m.Session, "conn-") {
					t.Errorf("message not in an MCP session: %s", m.Frame)
				}
			}
			if len(sessions) != len(calls) {
				t.Errorf("%d sessions recorded, want one per Inspector run (%d)", len(sessions), len(calls))
			}
			if transport == "sse" {
				for _, m := range msgs(recs, tape.ServerToClient) {
					if m.Stream != StreamSSE {
						t.Errorf("legacy answer on stream %q", m.Stream)
					}
				}
			}
		})
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// goClient connects a Go SDK client to url.
func goClient(t testing.TB, ctx context.Context, url string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcptape-e2e", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	return cs
}

// goSession runs the same scenario with a Go SDK client against url and
// returns what it saw: tools, results, progress notifications.
func goSession(t testing.TB, ctx context.Context, url, version string) string {
	t.Helper()
	var mu sync.Mutex
	var progress []float64
	cs := goClient(t, ctx, url, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
	}, version)
	var out strings.Builder
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "%d tools\n", len(tools.Tools))
	for _, name := range []string{"test_simple_text", "test_tool_with_progress", "test_error_handling"} {
		p := &mcp.CallToolParams{Name: name}
		p.SetProgressToken("tok-" + name)
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(res.Content)
		fmt.Fprintf(&out, "%s error=%v %s\n", name, res.IsError, b)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	mu.Lock()
	fmt.Fprintf(&out, "progress %v\n", progress)
	mu.Unlock()
	return out.String()
}

// TestHTTPGoSDKE2E: the Go SDK client against the Go SDK everything-server,
// stateful (2025-11-25 sessions, GET stream, resumption, DELETE) and
// stateless (2026-07-28), directly and through the proxy.
func TestHTTPGoSDKE2E(t *testing.T) {
	ctx := e2eContext(t, 2*time.Minute)
	t.Run("stateful", func(t *testing.T) {
		srv := peertest.GoEverythingHTTP(t, ctx, false)
		rig := startProxy(t, srv.URL)
		direct := goSession(t, ctx, srv.URL, "2025-11-25")
		proxied := goSession(t, ctx, viaProxy(rig, srv.URL), "2025-11-25")
		if direct != proxied {
			t.Fatalf("outcomes differ\n direct: %s\nproxied: %s", direct, proxied)
		}
		rig.stop()
		recs := rig.tape.records()
		checkTapeComplete(t, recs, true)
		var sid string
		for _, r := range events(recs, tape.EventOpen) {
			var d HTTPSessionEvent
			json.Unmarshal(r.Data, &d)
			if d.Kind == kindStreamable && d.How == "assigned" {
				sid = r.Session
			}
		}
		if sid == "" {
			t.Fatal("no session assigned by an initialize response")
		}
		var gets, deletes int
		for _, e := range httpEvents(t, recs, "response") {
			switch e.Method {
			case "GET":
				gets++
			case "DELETE":
				deletes++
			}
		}
		if gets == 0 || deletes != 1 {
			t.Errorf("GET streams %d, DELETEs %d", gets, deletes)
		}
		for _, m := range msgs(recs, "") {
			if m.Session != sid {
				t.Errorf("message in session %q, want %q: %.100s", m.Session, sid, m.Frame)
			}
		}
		closes := events(recs, tape.EventClose)
		if len(closes) != 1 || closes[0].Session != sid || !strings.Contains(string(closes[0].Data), `"delete"`) {
			t.Errorf("close events: %+v", closes)
		}
	})
	t.Run("stateless", func(t *testing.T) {
		srv := peertest.GoEverythingHTTP(t, ctx, true)
		// The proxy reaches the server through a front that holds back the
		// answer to the call cancelled below: the tool answers ~150 ms
		// after its start, and a cancel later than that (a loaded machine)
		// found the exchange ended by the server.
		rig := startProxy(t, peertest.HoldFront(t, srv.URL, `"cancel-me"`, nil))
		direct := goSession(t, ctx, srv.URL, "")
		proxied := goSession(t, ctx, viaProxy(rig, srv.URL), "")
		if direct != proxied {
			t.Fatalf("outcomes differ\n direct: %s\nproxied: %s", direct, proxied)
		}

		// Cancellation: closing the response stream is the cancel, here
		// on the call's first progress (a fixed 60 ms timer also fired
		// before the call was sent on a loaded machine).
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cs := goClient(t, ctx, viaProxy(rig, srv.URL), &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				if r.Params.ProgressToken == "cancel-me" {
					cancel()
				}
			},
		}, "")
		before := len(httpEvents(t, rig.tape.records(), "end"))
		p := &mcp.CallToolParams{Name: "test_tool_with_progress"}
		p.SetProgressToken("cancel-me")
		if _, err := cs.CallTool(cctx, p); err == nil {
			t.Error("the cancelled call completed")
		}
		cs.Close()
		waitEnded(t, rig, before+1)
		rig.stop()
		recs := rig.tape.records()
		var cancelled bool
		for _, r := range events(recs, tape.EventHTTP) {
			var e HTTPEvent
			json.Unmarshal(r.Data, &e)
			if e.Phase == "end" && e.ClosedBy == ClosedByClient && e.Method == "POST" {
				cancelled = true
			}
		}
		if !cancelled {
			t.Error("no exchange recorded as closed by the client")
		}
		var withHeaders int
		for _, e := range httpEvents(t, recs, "response") {
			if e.RequestHeaders.Get("Mcp-Method") != "" && e.RequestHeaders.Get("Mcp-Protocol-Version") == "2026-07-28" {
				withHeaders++
			}
		}
		if withHeaders == 0 {
			t.Error("no 2026-07-28 request recorded with its Mcp-Method header")
		}
		for _, m := range msgs(recs, "") {
			if !strings.HasPrefix(m.Session, "conn-") {
				t.Errorf("stateless message in session %q", m.Session)
			}
		}
	})
}

// TestHTTPMCPGoJSONE2E: an mcp-go server answering application/json.
func TestHTTPMCPGoJSONE2E(t *testing.T) {
	ctx := e2eContext(t, time.Minute)
	srv := peertest.MCPGoHTTP(t, ctx)
	rig := startProxy(t, srv.URL)
	run := func(u string) string {
		cs := goClient(t, ctx, u, nil, "2025-06-18")
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "json mode"}})
		if err != nil {
			t.Fatal(err)
		}
		cs.Close()
		b, _ := json.Marshal(res)
		return string(b)
	}
	if d, p := run(srv.URL), run(viaProxy(rig, srv.URL)); d != p || !strings.Contains(d, "Echo: json mode") {
		t.Fatalf("outcomes differ\n direct: %s\nproxied: %s", d, p)
	}
	rig.stop()
	recs := rig.tape.records()
	checkTapeComplete(t, recs, true)
	var jsonAnswers int
	for _, e := range httpEvents(t, recs, "end") {
		if e.Method == "POST" && e.Messages > 0 {
			jsonAnswers++
		}
	}
	for _, e := range httpEvents(t, recs, "response") {
		if e.Method == "POST" && e.Status == 200 && !strings.HasPrefix(e.ContentType, "application/json") {
			t.Errorf("mcp-go answered %q", e.ContentType)
		}
	}
	if jsonAnswers != 2 { // initialize and tools/call
		t.Errorf("%d JSON answers recorded", jsonAnswers)
	}
}

// rawVersion is the protocol version rawSession negotiates: the first one
// without batches.
const rawVersion = "2025-06-18"

// rawSession initializes a session by hand and returns its id.
func rawSession(t testing.TB, c *http.Client, u string) string {
	t.Helper()
	resp := peertest.PostJSON(t, c, u, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+rawVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	peertest.ReadAnswer(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize at %s: status %d, no session", u, resp.StatusCode)
	}
	peertest.ReadAnswer(t, peertest.PostJSON(t, c, u, sid, rawVersion, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return sid
}

// TestHTTPBatchE2E: a batch is accepted by server-everything and refused
// (400) by the Go SDK server; both answers reach the client as they are and
// are recorded as answered.
func TestHTTPBatchE2E(t *testing.T) {
	ctx := e2eContext(t, time.Minute)
	batch := `[{"jsonrpc":"2.0","id":11,"method":"ping"},{"jsonrpc":"2.0","id":12,"method":"tools/list"}]`
	for _, tc := range []struct {
		name   string
		start  func() *peertest.Process
		status int
	}{
		{"server-everything", func() *peertest.Process { return peertest.EverythingHTTP(t, ctx) }, http.StatusOK},
		{"go-sdk", func() *peertest.Process { return peertest.GoEverythingHTTP(t, ctx, false) }, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.start()
			rig := startProxy(t, srv.URL)
			c := freshClient(t)
			var bodies [2]string
			for i, u := range []string{srv.URL, viaProxy(rig, srv.URL)} {
				sid := rawSession(t, c, u)
				resp := peertest.PostJSON(t, c, u, sid, rawVersion, batch)
				body := peertest.ReadAnswer(t, resp)
				if resp.StatusCode != tc.status {
					t.Fatalf("%s: status %d %q, want %d", u, resp.StatusCode, body, tc.status)
				}
				bodies[i] = body
			}
			if tc.status == http.StatusOK && (!strings.Contains(bodies[1], `"id":11`) || !strings.Contains(bodies[1], `"id":12`)) {
				t.Errorf("batch answers: %q", bodies[1])
			}
			recs := waitEnded(t, rig, 3)
			var members, answers int
			for _, m := range msgs(recs, "") {
				if m.Exchange != 3 {
					continue
				}
				if m.Dir == tape.ClientToServer {
					members++
				} else {
					answers++
				}
			}
			end, _ := endEventOf(t, recs, 3)
			if members != 2 || end.Batch != 2 || end.Status != tc.status {
				t.Errorf("batch recorded as %d members, end %+v", members, end)
			}
			switch {
			case tc.status == http.StatusOK && answers != 2:
				t.Errorf("%d answers recorded, want one per member (body %q)", answers, bodies[1])
			case tc.status != http.StatusOK && (answers != 0 || end.Body != bodies[1]):
				// The Go SDK refuses with a plain-text body: kept in the end event.
				t.Errorf("refusal recorded as %d messages and body %q, want %q", answers, end.Body, bodies[1])
			}
		})
	}
}

// TestHTTPRebindingE2E: a Host that does not name the proxy reaches the Go
// SDK server unchanged, so its DNS-rebinding protection refuses it through
// the proxy as it does directly; Origin is forwarded as it is, so a server
// checking it (the Go SDK's CrossOriginProtection) refuses it too.
func TestHTTPRebindingE2E(t *testing.T) {
	ctx := e2eContext(t, time.Minute)
	srv := peertest.GoEverythingHTTP(t, ctx, false)
	rig := startProxy(t, srv.URL)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	c := freshClient(t)
	status := func(u, host, origin string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "POST", u, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp := mustDo(t, c, req)
		return resp.StatusCode, peertest.ReadAnswer(t, resp)
	}
	_, upPort, _ := strings.Cut(urlHost(srv.URL), ":")
	_, proxyPort, _ := strings.Cut(rig.addr, ":")
	if s, b := status(srv.URL, "evil.example:"+upPort, ""); s != http.StatusForbidden {
		t.Fatalf("direct rebinding attempt: %d %q", s, b)
	}
	if s, b := status(viaProxy(rig, srv.URL), "evil.example:"+proxyPort, ""); s != http.StatusForbidden || !strings.Contains(b, "evil.example") {
		t.Errorf("rebinding through the proxy: %d %q", s, b)
	}
	if s, b := status(viaProxy(rig, srv.URL), "", ""); s != http.StatusOK {
		t.Errorf("the proxy's own Host: %d %q", s, b)
	}

	// Origin: a Go SDK server of our own behind net/http's cross-origin
	// protection, as the SDK recommends.
	s := mcp.NewServer(&mcp.Implementation{Name: "origin-check", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	up := upstream(t, http.NewCrossOriginProtection().Handler(h))
	orig := startProxy(t, up.URL)
	d, _ := status(up.URL, "", "http://evil.example")
	p, body := status(orig.url+"/", "", "http://evil.example")
	if d != http.StatusForbidden || p != d {
		t.Errorf("cross-origin request: direct %d, through the proxy %d %q", d, p, body)
	}
}

// TestHTTPRecordCommandE2E runs "mcptape record --upstream" as a real
// process in front of server-everything, drives it with the Inspector CLI,
// stops it with SIGINT and reads the tape it closed.
func TestHTTPRecordCommandE2E(t *testing.T) {
	ctx := e2eContext(t, 2*time.Minute)
	srv := peertest.EverythingHTTP(t, ctx)
	tp := filepath.Join(t.TempDir(), "http.jsonl.zst")
	cmd := exec.CommandContext(ctx, mcptapeBin(t), "record", "--upstream", srv.URL, "--listen", "127.0.0.1:0", "-o", tp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	var proxied string
	for lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "proxying "); ok {
			proxied, _, _ = strings.Cut(rest, " ")
			break
		}
	}
	if proxied == "" {
		t.Fatal("mcptape record did not say where it listens")
	}
	go io.Copy(io.Discard, stderr)
	args := []string{"--transport", "http", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=via the binary"}
	direct := peertest.Inspector(t, ctx, append([]string{srv.URL}, args...)...)
	got := peertest.Inspector(t, ctx, append([]string{proxied}, args...)...)
	if got != direct {
		t.Fatalf("outputs differ\n direct: %s\nproxied: %s", direct, got)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcptape record ended with %v", err)
	}
	hdr, _, _ := readTape(t, tp)
	recs := closedTape(t, tp)
	if hdr.Transport != "http" || hdr.Target != srv.URL {
		t.Errorf("header %+v", hdr)
	}
	methods := checkTapeComplete(t, recs, true)
	if !containsString(methods, "tools/call") || !containsString(methods, "initialize") {
		t.Errorf("methods recorded: %v", methods)
	}
	if closes := events(recs, tape.EventClose); len(closes) != 1 || !strings.Contains(string(closes[0].Data), "shutdown") {
		t.Errorf("close events %+v", closes)
	}
}
