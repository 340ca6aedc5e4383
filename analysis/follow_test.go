package analysis

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/syncio"
	"github.com/mcptape/mcptape/tape"
)

// syncBuffer is a buffer safe for a writer and a reader goroutine.
type syncBuffer = syncio.Buffer

// waitFor waits until out holds want, failing the test after a while.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q; output:\n%s", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveTape writes a tape with the tape package's Writer (what record
// uses) and hands each message to the test before the next.
type liveTape struct {
	t *testing.T
	w *tape.Writer
	n int
}

func newLiveTape(t *testing.T, path string) *liveTape {
	w, err := tape.Create(path, tape.Header{Version: "live", Transport: "stdio", Target: "server"})
	if err != nil {
		t.Fatal(err)
	}
	return &liveTape{t: t, w: w}
}

func (l *liveTape) send(dir tape.Direction, frame string) {
	l.n++
	if err := l.w.Write(&tape.Record{Type: tape.TypeMessage, Time: time.Now().UnixNano(), Session: "1", Dir: dir, Frame: []byte(frame)}); err != nil {
		l.t.Fatal(err)
	}
}

// TestFollowShow: each message shows while the tape is still being
// written (the writer flushes a frame every 100 ms); a problem is flagged
// on its own line; the end record ends the follow.
func TestFollowShow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.jsonl.zst")
	l := newLiveTape(t, path)
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		_, err := FollowShow(context.Background(), path, out, WithMethod("tools/*"))
		done <- err
	}()
	l.send(tape.ClientToServer, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	l.send(tape.ServerToClient, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}`)
	l.send(tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	waitFor(t, out, "tools/call")
	if strings.Contains(out.String(), "initialize") {
		t.Errorf("the method filter let initialize through:\n%s", out.String())
	}
	// A streamed answer is an info note, not a flagged problem.
	l.send(tape.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"type":"content_start"}}`)
	l.send(tape.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"type":"content_end","usage":{"total_tokens":1}}}`)
	waitFor(t, out, "end #2")
	l.send(tape.ServerToClient, `{"jsonrpc":"2.0","id":7,"result":{}}`)
	waitFor(t, out, "!! ")
	waitFor(t, out, "response-unknown-id")
	if strings.Contains(out.String(), RuleStreamedResponse) {
		t.Errorf("a streamed answer was flagged as a problem:\n%s", out.String())
	}
	select {
	case err := <-done:
		t.Fatalf("follow ended before the end record: %v", err)
	default:
	}
	if err := l.w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("follow did not stop at the end record")
	}
}

// TestFollowInspectStops: Ctrl-C (the context) ends a follow of a tape
// that is still open, with the report of what was read and no damage
// reported; the end record ends another.
func TestFollowInspectStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.jsonl.zst")
	l := newLiveTape(t, path)
	defer l.w.Close()
	l.send(tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan *Report, 1)
	go func() {
		rep, err := FollowInspect(ctx, path, out)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	waitFor(t, out, "request-before-initialize")
	cancel()
	select {
	case rep := <-done:
		if rep == nil || rep.Tape.Messages != 1 || rep.Tape.Warning != "" {
			t.Errorf("report %+v", rep)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ctrl-C did not stop the follow")
	}
}

// TestFollowOlderTape: a finished tape of the older kind (no time_ordered
// in its header) is followed in file order up to its end record, not held
// back for a time ordering that would wait for records to come.
func TestFollowOlderTape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "older.jsonl.zst")
	writeTape(t, path, []step{
		c2s(2*time.Millisecond, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b"}}`),
		c2s(1*time.Millisecond, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`),
	}, tape.WithCallOrder())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := &syncBuffer{}
	if _, err := FollowShow(ctx, path, out); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("follow did not stop at the end record:\n%s", out.String())
	}
	if second, first := strings.Index(out.String(), "+0.002s  1"), strings.Index(out.String(), "+0.001s  1"); second < 0 || first < second {
		t.Errorf("not in file order:\n%s", out.String())
	}
}

// TestFollowNotATape: following a file that does not start as a tape
// fails at once, naming what it holds, whatever is appended later: it
// waited for ever (16 bytes to describe it that never came).
func TestFollowNotATape(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{name: "short text", content: "hello\n", want: `not zstd data (starts with "hello\n")`},
		{name: "long text", content: "hello world, not a tape\n", want: `not zstd data (starts with "hello world, not")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl.zst")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := FollowShow(ctx, path, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || ctx.Err() != nil {
				t.Errorf("error %v (context %v), want at once one with %q", err, ctx.Err(), tt.want)
			}
		})
	}
}

// TestFollowCatJoinedTapes: a finished file of two tapes joined with cat
// is followed to its end, the second tape's session kept apart, and not
// only to the first tape's end record.
func TestFollowCatJoinedTapes(t *testing.T) {
	dir := filepath.Join("..", "testdata", "analysis")
	path := peertest.Cat(t, filepath.Join(dir, "everything-stdio.jsonl.zst"), filepath.Join(dir, "gosdk-everything.jsonl.zst"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := FollowInspect(ctx, path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("follow did not stop at the end of the file")
	}
	alone, err := Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range rep.Sessions {
		ids = append(ids, s.ID)
	}
	if len(ids) != 2 || ids[1] != "r2/1" || rep.Tape.Messages != alone.Tape.Messages {
		t.Errorf("followed: sessions %q, %d messages; want 1 and r2/1, %d messages (as read whole)", ids, rep.Tape.Messages, alone.Tape.Messages)
	}
}
