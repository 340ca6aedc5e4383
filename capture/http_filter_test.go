package capture

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// TestSampleShare: the share of sessions sampled matches F within
// binomial bounds (5 standard deviations: a false failure once in about
// 1.7 million runs), 0 and 1 take none and all, and the choice depends on
// the seed only.
func TestSampleShare(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		f    float64
		seed uint64
	}{{0, 1}, {0.01, 1}, {0.1, 2}, {0.5, 3}, {0.9, 4}, {1, 5}} {
		k := 0
		for i := range n {
			if Sampled(fmt.Sprintf("conn-%d", i), tc.f, tc.seed) {
				k++
			}
		}
		mean, sd := n*tc.f, math.Sqrt(n*tc.f*(1-tc.f))
		if math.Abs(float64(k)-mean) > 5*sd {
			t.Errorf("F=%v: %d of %d sessions sampled, want %.0f ± %.0f", tc.f, k, n, mean, 5*sd)
		}
	}
	same, differ := 0, 0
	for i := range 1000 {
		id := fmt.Sprintf("%032x", i*7919)
		first := Sampled(id, 0.5, 42) // a second call must agree
		if Sampled(id, 0.5, 42) == first {
			same++
		}
		if first != Sampled(id, 0.5, 43) {
			differ++
		}
	}
	if same != 1000 || differ < 400 || differ > 600 {
		t.Errorf("same seed agreed %d/1000, another seed disagreed %d/1000 (want all, about half)", same, differ)
	}
}

// jsonEcho answers every POST with a JSON result for the request's id
// (202 for a notification).
func jsonEcho() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, req.ID)
	})
}

// TestHTTPSampleWholeSessions: with --sample, every session is recorded
// whole (open, messages, close) or not at all, as Sampled says, while the
// client gets every answer.
func TestHTTPSampleWholeSessions(t *testing.T) {
	up := upstream(t, jsonEcho())
	const seed, sessions = 99, 40
	rig := startProxy(t, up.URL+"/mcp", WithSample(0.5, seed))
	c := freshClient(t)
	for i := range sessions {
		sid := fmt.Sprintf("sess-%d", i)
		for k := 1; k <= 2; k++ {
			got := peertest.ReadAnswer(t, peertest.PostJSON(t, c, rig.url+"/mcp", sid, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, k)))
			if !strings.Contains(got, fmt.Sprintf(`"id":%d`, k)) {
				t.Fatalf("%s: client got %q", sid, got)
			}
		}
	}
	waitFor(t, func() bool { return rig.proxy.st.ended.Load() == 2*sessions })
	rig.stop()
	count := map[string]map[string]int{}
	for _, r := range rig.tape.records() {
		if count[r.Session] == nil {
			count[r.Session] = map[string]int{}
		}
		count[r.Session][string(r.Type)+r.Event]++
	}
	recorded := 0
	for i := range sessions {
		sid := fmt.Sprintf("sess-%d", i)
		c := count[sid]
		if !Sampled(sid, 0.5, seed) {
			if c != nil {
				t.Errorf("%s is out of the sample but recorded: %v", sid, c)
			}
			continue
		}
		recorded++
		if c["message"] != 4 || c["eventopen"] != 1 || c["eventclose"] != 1 || c["eventhttp"] != 4 {
			t.Errorf("%s recorded partly: %v", sid, c)
		}
	}
	if recorded == 0 || recorded == sessions {
		t.Errorf("%d of %d sessions recorded at F=0.5", recorded, sessions)
	}
	// Sessions out of the sample are forwarded without being parsed: only
	// the recorded ones' messages are counted.
	if st := rig.proxy.Stats(); st.Unrecorded == 0 || st.ClientMessages != int64(2*recorded) || st.ServerMessages != int64(2*recorded) {
		t.Errorf("stats %+v, want %d messages each way", st, 2*recorded)
	}
}

// TestHTTPMethodFilter: --record-only and --skip keep or drop messages by
// method, responses with their request; open and close events stay.
func TestHTTPMethodFilter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		only, skip []string
		want       string // methods of the recorded messages, responses as "<-M"
	}{
		{name: "record-only tools", only: []string{"tools/*"}, want: "tools/call <-tools/call"},
		{name: "skip ping", skip: []string{"ping"}, want: "tools/call <-tools/call notifications/initialized"},
		{name: "only and skip", only: []string{"*"}, skip: []string{"notifications/*", "tools/c?ll"}, want: "ping <-ping"},
		{name: "no filter", want: "tools/call <-tools/call ping <-ping notifications/initialized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := upstream(t, jsonEcho())
			rig := startProxy(t, up.URL+"/mcp", WithMethodFilter(tc.only, tc.skip))
			c := freshClient(t)
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
				`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			} {
				peertest.ReadAnswer(t, peertest.PostJSON(t, c, rig.url+"/mcp", "S", "", body))
			}
			waitFor(t, func() bool { return rig.proxy.st.ended.Load() == 3 })
			rig.stop()
			var got []string
			opens, closes := 0, 0
			method := map[string]string{}
			for _, r := range rig.tape.records() {
				switch {
				case r.Event == tape.EventOpen:
					opens++
				case r.Event == tape.EventClose:
					closes++
				case r.Type == tape.TypeMessage:
					var m struct {
						ID     json.RawMessage
						Method string
					}
					json.Unmarshal(r.Frame, &m)
					if m.Method != "" {
						method[string(m.ID)] = m.Method
						got = append(got, m.Method)
					} else {
						got = append(got, "<-"+method[string(m.ID)])
					}
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("recorded %q, want %q", g, tc.want)
			}
			if opens != 1 || closes != 1 {
				t.Errorf("%d open and %d close events, want 1 each", opens, closes)
			}
		})
	}
}

func TestSampleOptionErrors(t *testing.T) {
	for _, opt := range []HTTPOption{WithSample(-0.1, 0), WithSample(1.5, 0), WithSample(math.NaN(), 0), WithMethodFilter([]string{"tools/[x"}, nil), WithMethodFilter(nil, []string{"[a"})} {
		if _, err := NewHTTPProxy("http://127.0.0.1:1/mcp", &memTape{}, opt); err == nil {
			t.Error("bad option accepted")
		}
	}
}
