package capture

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// serverRequestUpstream is a streamable server whose GET event stream
// carries one server request, id "s1", and that accepts anything POSTed.
func serverRequestUpstream(t *testing.T) string {
	t.Helper()
	return upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{}}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	})).URL
}

// readEvents reads the data of event stream body until one holds want.
func readEvents(t *testing.T, body io.Reader, want string) {
	t.Helper()
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			return
		}
	}
	t.Fatalf("stream ended before %s", want)
}

// legacyRig serves a proxy to a legacy HTTP+SSE server (legacyServer)
// and opens its event stream; it returns the proxy, the client, the
// stream (closed at cleanup) and the endpoint to POST to.
func legacyRig(t *testing.T, opts ...HTTPOption) (*proxyRig, *http.Client, *bufio.Reader, string) {
	t.Helper()
	ls := &legacyServer{streams: map[string]chan string{}}
	rig := startProxy(t, upstream(t, ls).URL, opts...)
	c := freshClient(t)
	resp, err := c.Get(rig.url + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	return rig, c, br, legacyEndpoint(t, br)
}

// legacyEndpoint reads the endpoint event of a legacy stream.
func legacyEndpoint(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			return d
		}
	}
}

// TestObserverPairsAnswersAcrossExchanges: an answer that comes on
// another exchange than its request is reported under its request's
// method, per session: a server's answer on a legacy HTTP+SSE stream or
// on a LangGraph-dialect side stream (every part of a streamed answer),
// a client's answer, in a later POST, to a server request of its
// session's GET stream (the same id from another session stays ""). The
// table of requests in flight is empty once every one is answered. Both
// the lean path and net/http's.
func TestObserverPairsAnswersAcrossExchanges(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, opts ...HTTPOption) *proxyRig
		want []string
	}{
		{"legacy", func(t *testing.T, opts ...HTTPOption) *proxyRig {
			rig, c, br, endpoint := legacyRig(t, opts...)
			for id := 1; id <= 2; id++ {
				peertest.ReadAnswer(t, peertest.PostJSON(t, c, rig.url+endpoint, "", "",
					fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)))
				readEvents(t, br, fmt.Sprintf(`"id":%d`, id))
			}
			return rig
		}, []string{"c2s request ping", "c2s request ping", "s2c response ping", "s2c response ping"}},
		{"server request", func(t *testing.T, opts ...HTTPOption) *proxyRig {
			rig := startProxy(t, serverRequestUpstream(t)+"/mcp", opts...)
			c := freshClient(t)
			req, _ := http.NewRequest(http.MethodGet, rig.url+"/mcp", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", "S")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			readEvents(t, resp.Body, `"id":"s1"`)
			for _, session := range []string{"S", "T"} { // T has no server request s1
				peertest.ReadAnswer(t, peertest.PostJSON(t, c, rig.url+"/mcp", session, "", `{"jsonrpc":"2.0","id":"s1","result":{}}`))
			}
			return rig
		}, []string{"c2s response ", "c2s response sampling/createMessage", "s2c request sampling/createMessage"}},
		{"langgraph", func(t *testing.T, opts ...HTTPOption) *proxyRig {
			rig := startProxy(t, langGraphUpstream(t, 2)+refserver.Path, opts...)
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Get(rig.url + refserver.StreamPath)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			r, err := c.Post(rig.url+refserver.Path, "application/json",
				strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`))
			if err != nil {
				t.Fatal(err)
			}
			peertest.ReadAnswer(t, r)
			readEvents(t, resp.Body, "content_end")
			return rig
		}, []string{"c2s request tools/call", "s2c response tools/call", "s2c response tools/call",
			"s2c response tools/call", "s2c response tools/call"}}, // start, 2 deltas, end
	}
	for _, path := range []struct {
		name string
		opts []HTTPOption
	}{{"lean", nil}, {"net/http", []HTTPOption{withNetHTTPOnly()}}} {
		for _, tc := range cases {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				obs := &seenMessages{}
				rig := tc.run(t, append([]HTTPOption{WithObserver(obs)}, path.opts...)...)
				var got []string
				waitFor(t, func() bool {
					obs.mu.Lock()
					defer obs.mu.Unlock()
					return len(obs.msgs) >= len(tc.want)
				})
				got = obs.take()
				if !slices.Equal(got, tc.want) {
					t.Errorf("got  %q\nwant %q", got, tc.want)
				}
				if n := rig.proxy.methods.size(); n != 0 {
					t.Errorf("%d requests left in the method table, all were answered", n)
				}
			})
		}
	}
}

// TestObserverOffNoMethodTable: without an observer the proxy notes no
// request for it (the table is never made).
func TestObserverOffNoMethodTable(t *testing.T) {
	rig, c, br, endpoint := legacyRig(t)
	peertest.ReadAnswer(t, peertest.PostJSON(t, c, rig.url+endpoint, "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	readEvents(t, br, `"id":1`)
	rig.proxy.methods.mu.Lock()
	defer rig.proxy.methods.mu.Unlock()
	if rig.proxy.methods.m != nil || rig.proxy.methods.ring != nil {
		t.Errorf("the method table was made with no observer")
	}
}

// TestMethodTableBounded: requests never answered cost at most
// maxMethodEntries entries; noting past the bound forgets the oldest
// still unanswered, not one noted again since (its key's latest note).
func TestMethodTableBounded(t *testing.T) {
	var mt methodTable
	id := func(n int) *jsonrpc.ID {
		info := jsonrpc.Classify(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"m"}`, n))
		return &info.ID
	}
	mt.note("S", tape.ClientToServer, id(0), "first")
	mt.note("S", tape.ClientToServer, id(1), "renoted")
	mt.note("S", tape.ClientToServer, id(1), "renoted") // its first slot goes stale
	for n := 2; n < 3*maxMethodEntries; n++ {
		mt.note("S", tape.ClientToServer, id(n), "tools/call")
		if n == maxMethodEntries { // slot of id 1's first note reused: it stays
			if got := mt.answer("S", tape.ClientToServer, id(1), false); got != "renoted" {
				t.Fatalf("id 1 noted again, then its stale slot reused: %q", got)
			}
		}
		if s := mt.size(); s > maxMethodEntries {
			t.Fatalf("%d entries after %d notes, bound %d", s, n+2, maxMethodEntries)
		}
	}
	tests := []struct {
		session string
		dir     tape.Direction
		id      int
		ends    bool
		want    string
	}{
		{"S", tape.ClientToServer, 0, true, ""}, // forgotten at the bound
		{"S", tape.ClientToServer, 3*maxMethodEntries - 1, false, "tools/call"},
		{"S", tape.ClientToServer, 3*maxMethodEntries - 1, true, "tools/call"}, // a part, then the end
		{"S", tape.ClientToServer, 3*maxMethodEntries - 1, true, ""},           // answered
		{"T", tape.ClientToServer, 3*maxMethodEntries - 2, true, ""},           // another session
		{"S", tape.ServerToClient, 3*maxMethodEntries - 2, true, ""},           // the other direction
	}
	for _, tt := range tests {
		if got := mt.answer(tt.session, tt.dir, id(tt.id), tt.ends); got != tt.want {
			t.Errorf("answer(%s, %s, %d) = %q, want %q", tt.session, tt.dir, tt.id, got, tt.want)
		}
	}
}

// TestMethodTableParksClientAnswers: a client's answer that comes before
// its server request is noted waits for it and is reported under its
// method when it comes, under "" when it does not come in time; a second
// answer to one server request does not wait.
func TestMethodTableParksClientAnswers(t *testing.T) {
	obs := &seenMessages{}
	mt := methodTable{obs: obs}
	id := func(s string) *jsonrpc.ID {
		info := jsonrpc.Classify([]byte(`{"jsonrpc":"2.0","id":"` + s + `","result":{}}`))
		return &info.ID
	}
	if _, parked := mt.answerClient("S", id("a"), jsonrpc.KindResponse); !parked {
		t.Fatal("answer to nothing noted: not parked")
	}
	if m, parked := mt.answerClient("S", id("a"), jsonrpc.KindError); parked || m != "" {
		t.Errorf("second answer: %q parked %v", m, parked)
	}
	if seq := mt.note("S", tape.ServerToClient, id("a"), "roots/list"); seq != 0 {
		t.Errorf("server request answered already noted as %d", seq)
	}
	if _, parked := mt.answerClient("S", id("b"), jsonrpc.KindError); !parked {
		t.Fatal("answer to nothing noted: not parked")
	}
	if got, want := obs.take(), []string{"c2s response roots/list"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	waitFor(t, func() bool { return mt.size() == 0 })
	if got, want := obs.take(), []string{"c2s error "}; !slices.Equal(got, want) {
		t.Errorf("after parkAnswerFor: got %q, want %q", got, want)
	}
	if m := mt.answer("S", tape.ServerToClient, id("a"), true); m != "" {
		t.Errorf("server request a still noted: %q", m)
	}
}
