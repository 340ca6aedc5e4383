package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// TestHTTPConcurrentTapeOrdered: concurrent Streamable HTTP sessions
// recorded through the proxy into a real tape give a tape whose header
// says time_ordered and whose records come, in file order, in
// non-decreasing time, with every response after the request it answers
// (client requests, and the server's elicitation requests answered by the
// client).
func TestHTTPConcurrentTapeOrdered(t *testing.T) {
	const sessions, rounds = 8, 50
	ctx := e2eContext(t, 2*time.Minute)
	srv, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(refserver.HTTPHandler(srv, refserver.HTTPConfig{}))
	t.Cleanup(up.Close)
	path := filepath.Join(t.TempDir(), "concurrent.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Transport: "http", Target: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	rig := startProxyTape(t, up.URL, w)
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "tape"}}, nil
		},
	}
	var wg sync.WaitGroup
	for g := range sessions {
		wg.Go(func() {
			cs := goClient(t, ctx, viaProxy(rig, up.URL+refserver.Path), opts, "2025-11-25")
			defer cs.Close()
			for i := range rounds {
				calls := []*mcp.CallToolParams{
					{Name: "echo", Arguments: map[string]any{"message": fmt.Sprintf("s%d r%d", g, i)}},
					{Name: "ask", Arguments: map[string]any{"kind": "elicitation"}},
				}
				for _, p := range calls {
					if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
						t.Errorf("session %d: %s: %v %+v", g, p.Name, err, res)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	rig.stop()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Header().TimeOrdered {
		t.Error("header without time_ordered")
	}
	var last int64
	requested := map[string]bool{} // session, direction and id of the requests read
	answers, serverRequests := 0, 0
	var inverted []string
	for {
		rec, err := r.Next() // a time_ordered tape is read in file order
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Time < last {
			t.Fatalf("record %d (%s %s) at %d comes after one at %d", r.Records(), rec.Type, rec.Event, rec.Time, last)
		}
		last = rec.Time
		if rec.Type != tape.TypeMessage {
			continue
		}
		info := jsonrpc.Classify(rec.Frame)
		switch info.Kind {
		case jsonrpc.KindRequest:
			requested[rec.Session+" "+string(rec.Dir)+" "+info.ID.Key()] = true
			if rec.Dir == tape.ServerToClient {
				serverRequests++
			}
		case jsonrpc.KindResponse, jsonrpc.KindError:
			other := tape.ServerToClient
			if rec.Dir == tape.ServerToClient {
				other = tape.ClientToServer
			}
			if !requested[rec.Session+" "+string(other)+" "+info.ID.Key()] {
				inverted = append(inverted, fmt.Sprintf("record %d: %s response to id %s before its request", r.Records(), rec.Dir, info.ID.Key()))
			}
			answers++
		}
	}
	// A record handed to the writer more than a flush interval after its
	// stamp (a goroutine stalled that long: -race on a loaded machine) is
	// written late, with the time of what was already cut, and counted:
	// only then may an answer come before its request in the file.
	if st := w.Stats(); len(inverted) > 0 && st.Late == 0 {
		t.Errorf("answers before their requests, with no record written late:\n%s", strings.Join(inverted, "\n"))
	} else if len(inverted) > 0 {
		t.Logf("%d answers before their requests; the writer counted %d records late (by up to %v)", len(inverted), st.Late, time.Duration(st.LateMax))
	}
	if want := sessions * rounds * 2; answers < want || serverRequests < sessions*rounds {
		t.Errorf("%d answers, %d server requests in the tape; want at least %d and %d", answers, serverRequests, want, sessions*rounds)
	}
	if w := r.Warning(); w != nil {
		t.Error(w)
	}
}
