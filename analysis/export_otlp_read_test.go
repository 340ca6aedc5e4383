package analysis

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/tape"
)

// exportOTLPCopying exports the tape at path as OTLP reading it the
// plain way: every record and frame a copy of its own, params and result
// walked by the exporter (no fields found ahead).
func exportOTLPCopying(t *testing.T, path string) []byte {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc, err := NewScanner(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var buf bytes.Buffer
	if err := exportOTLP(sc, r.Header(), &buf, &ExportStats{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestExportOTLPSharedFrames: the OTLP export reads a tape as inspect
// does (frames not copied, decompressed into the buffers of released
// ones, the params and result fields found ahead): it writes what the
// plain reading writes, byte for byte. The long tape holds requests in
// flight across many decompressed frames (their names, ids, traceparents
// and tracestates taken from frames long reused), batches and string ids;
// the fixtures hold MRTR rounds, tasks, cut and broken-off exchanges.
func TestExportOTLPSharedFrames(t *testing.T) {
	long := filepath.Join(t.TempDir(), "long.jsonl.zst")
	w, err := tape.Create(long, tape.Header{Version: "test", Time: testStart.UnixNano(), Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	at := testStart.UnixNano()
	write := func(dir tape.Direction, frame string) {
		at += 1000
		if err := w.Write(&tape.Record{Type: tape.TypeMessage, Time: at, Session: fmt.Sprint("s", at/1000%5), Dir: dir, Frame: []byte(frame)}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 6000
	for i := 0; i < n; i++ {
		pad := bytes.Repeat([]byte{'a' + byte(i%26)}, 800+i%800) // frames of 1 MiB fill fast
		switch i % 50 {
		case 0: // in flight to the end, from an early frame
			write(tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":"k-%d","method":"tools/call","params":{"name":"slow-%d-%s","_meta":{"traceparent":"00-%032x-%016x-01","tracestate":"v=%d"}}}`, i, i, pad, i+1, i+1, i))
		case 1: // a batch
			write(tape.ClientToServer, fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"file:///%s"}},{"jsonrpc":"2.0","method":"notifications/x"}]`, i, pad))
			write(tape.ServerToClient, fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"result":{"contents":[]}}]`, i))
		default:
			write(tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d","arguments":{"q":"%s"}}}`, i, i%7, pad))
			write(tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}],"isError":%v}}`, i, pad, i%3 == 0))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	paths := []string{long}
	for _, name := range []string{"operations.jsonl.zst", "operations-http.jsonl.zst", "gosdk-refserver.jsonl.zst", "everything-http.jsonl.zst",
		"http-cut-mid-response.jsonl.zst", "http-broken-off.jsonl.zst", "violations.jsonl.zst"} {
		paths = append(paths, filepath.Join(fixtureDir, name))
	}
	for _, path := range paths {
		got, st := export(t, path, ExportOTLP)
		if want := exportOTLPCopying(t, path); !bytes.Equal(got, want) {
			t.Errorf("%s: the export differs from the plain reading's (%d vs %d bytes)", filepath.Base(path), len(got), len(want))
		}
		if path == long && st.Entries < n {
			t.Errorf("%d spans from %d requests", st.Entries, n)
		}
	}
}
