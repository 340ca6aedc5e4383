package capture

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// bomb returns prefix, n bytes of 'A' and suffix, gzip-compressed (one
// gzip member, best compression). Compressing 64 MiB takes 8 s under the
// race detector; a deflate block of a MiB of 'A' after a MiB of 'A' only
// refers back to 'A's, so that block is compressed once and repeated, and
// the trailer's CRC-32 and size are those of the whole (gzip.Reader
// checks both): the same stream, in a fraction of a second.
func bomb(t testing.TB, prefix string, n int, suffix string) []byte {
	t.Helper()
	size := uint32(len(prefix) + n + len(suffix)) // ISIZE: modulo 2^32
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	io.WriteString(zw, prefix)
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	crc := crc32.ChecksumIEEE([]byte(prefix))
	write := func(k int) {
		zw.Write(chunk[:k])
		crc = crc32.Update(crc, crc32.IEEETable, chunk[:k])
		n -= k
	}
	if n >= 3*len(chunk) {
		write(len(chunk)) // the window is all 'A' from here on
		zw.Flush()
		mark := buf.Len()
		write(len(chunk))
		zw.Flush() // ends the block on a byte
		block := bytes.Clone(buf.Bytes()[mark:])
		for n >= len(chunk) {
			buf.Write(block)
			crc = crc32.Update(crc, crc32.IEEETable, chunk)
			n -= len(chunk)
		}
	}
	for n > 0 {
		write(min(n, len(chunk)))
	}
	io.WriteString(zw, suffix)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	crc = crc32.Update(crc, crc32.IEEETable, []byte(suffix))
	binary.LittleEndian.PutUint32(out[len(out)-8:], crc)
	binary.LittleEndian.PutUint32(out[len(out)-4:], size)
	return out
}

// TestBomb: bomb's stream decodes, as one gzip member with its trailer
// checked, to exactly what it says, on the short path and the repeated
// block's.
func TestBomb(t *testing.T) {
	for _, n := range []int{0, 1000, 3<<20 + 12345} {
		zr, err := gzip.NewReader(bytes.NewReader(bomb(t, "<", n, ">")))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if want := "<" + strings.Repeat("A", n) + ">"; string(got) != want {
			t.Errorf("%d bytes: decoded %d bytes, not the %d wanted", n, len(got), len(want))
		}
	}
}

// TestDecodeBudget: holds take within their own limit and the shared
// budget, and give everything back.
func TestDecodeBudget(t *testing.T) {
	b := newDecodeBudget(100, 250)
	h1, h2, h3 := b.body(), b.body(), b.stream()
	steps := []struct {
		name   string
		h      *decodeHold
		take   int
		got    int
		capped string
		left   int // budget left after the step
	}{
		{"within both", &h1, 60, 60, "", 190},
		{"body cap", &h1, 60, 40, cappedBody, 150},
		{"at the cap", &h1, 1, 0, cappedBody, 150},
		{"second body", &h2, 100, 100, "", 50},
		{"stream: budget", &h3, 80, 50, cappedBudget, 0},
		{"nothing left", &h2, 1, 0, cappedBody, 0},
	}
	for _, s := range steps {
		got := s.h.take(s.take)
		if got != s.got || s.h.capped != s.capped || b.left != s.left {
			t.Fatalf("%s: take(%d) = %d capped %q, left %d; want %d %q %d", s.name, s.take, got, s.h.capped, b.left, s.got, s.capped, s.left)
		}
	}
	h3.keep(20) // the framer emitted its event: 20 bytes still held
	if b.left != 30 || h3.held != 20 {
		t.Fatalf("after keep(20): left %d, held %d", b.left, h3.held)
	}
	if got := h3.take(40); got != 30 || h3.capped != cappedBudget {
		t.Fatalf("stream take after keep: %d %q", got, h3.capped)
	}
	for _, h := range []*decodeHold{&h1, &h2, &h3} {
		h.release()
		h.release() // idempotent
	}
	if b.left != 250 {
		t.Fatalf("budget left %d after every release, want 250", b.left)
	}
	if !strings.Contains(h3.reason(), "budget") || !strings.Contains(h1.reason(), "100 bytes") {
		t.Errorf("reasons %q, %q", h3.reason(), h1.reason())
	}
}

// TestDecodeBody: whole bodies decode; a bomb stops at the cap without
// being decoded further (its allocations stay near the cap); broken and
// unknown encodings are errors.
func TestDecodeBody(t *testing.T) {
	small := `{"jsonrpc":"2.0","id":1,"method":"m"}`
	var zl bytes.Buffer
	zw := zlib.NewWriter(&zl)
	io.WriteString(zw, small)
	zw.Close()
	big := bomb(t, `{"s":"`, 64<<20, `"}`)
	tests := []struct {
		name     string
		enc      string
		body     []byte
		want     string // decoded prefix
		wantLen  int
		cut      bool
		err      string
		maxAlloc uint64 // bound on the bytes allocated, 0: none
	}{
		{name: "gzip", enc: "gzip", body: bomb(t, small, 0, ""), want: small, wantLen: len(small)},
		{name: "deflate (zlib)", enc: "deflate", body: zl.Bytes(), want: small, wantLen: len(small)},
		{name: "bomb", enc: "x-gzip", body: big, want: `{"s":"AAA`, wantLen: 1 << 20, cut: true, maxAlloc: 8 << 20},
		{name: "not gzip", enc: "gzip", body: []byte("plain"), err: "gzip"},
		{name: "unknown", enc: "br", body: []byte("x"), err: `"br"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newDecodeBudget(1<<20, 4<<20)
			h := b.body()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, cut, err := decodeBody(tt.enc, tt.body, &h)
			runtime.ReadMemStats(&after)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || cut != tt.cut || len(out) != tt.wantLen || !strings.HasPrefix(string(out), tt.want) {
				t.Fatalf("got %d bytes %.20q cut %v err %v; want %d bytes %q cut %v", len(out), out, cut, err, tt.wantLen, tt.want, tt.cut)
			}
			if tt.maxAlloc > 0 && after.TotalAlloc-before.TotalAlloc > tt.maxAlloc {
				t.Errorf("decoding allocated %d bytes, want at most %d", after.TotalAlloc-before.TotalAlloc, tt.maxAlloc)
			}
			h.release()
			if b.left != 4<<20 {
				t.Errorf("budget left %d after release", b.left)
			}
		})
	}
}

// TestHTTPGzipBomb: gzip bombs, in a request body, a JSON response and an
// event stream, are forwarded byte for byte and recorded cut at the
// per-body bound, each announced by a "truncated" error event just before
// its message; the proxy's allocations stay near the bounds, not the
// decoded sizes.
func TestHTTPGzipBomb(t *testing.T) {
	const decoded = 64 << 20
	reqBomb := bomb(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"s":"`, decoded, `"}}`)
	jsonBomb := bomb(t, `{"jsonrpc":"2.0","id":1,"result":{"s":"`, decoded, `"}}`)
	sseBomb := bomb(t, `data: {"jsonrpc":"2.0","id":1,"result":{"s":"`, decoded, "\"}}\n\n")
	upGot := make(chan []byte, 2)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		upGot <- body
		w.Header().Set("Content-Encoding", "gzip")
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(sseBomb)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(jsonBomb)
	}))
	const perBody = 1 << 20
	rig := startProxy(t, up.URL, WithMaxDecoded(perBody), WithDecodeBudget(4*perBody))
	c := freshClient(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, tc := range []struct{ path, resp string }{{"/mcp", string(jsonBomb)}, {"/sse", string(sseBomb)}} {
		req, _ := http.NewRequest("POST", rig.url+tc.path, bytes.NewReader(reqBomb))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("Mcp-Session-Id", "bomb")
		if got := peertest.ReadAnswer(t, mustDo(t, c, req)); got != tc.resp {
			t.Errorf("%s: the client got %d bytes, not the %d compressed bytes sent", tc.path, len(got), len(tc.resp))
		}
		if got := <-upGot; !bytes.Equal(got, reqBomb) {
			t.Errorf("%s: the upstream got %d bytes, not the %d compressed bytes sent", tc.path, len(got), len(reqBomb))
		}
	}
	recs := waitEnded(t, rig, 2)
	runtime.ReadMemStats(&after)
	// Each of the 4 bodies costs at most its bound a few times over
	// (decoding, the tape's copy); decoded whole, one would cost 64 MiB.
	t.Logf("allocated %d MiB", (after.TotalAlloc-before.TotalAlloc)>>20)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
		t.Errorf("the exchanges allocated %d MiB for 4 bombs of %d MiB", alloc>>20, decoded>>20)
	}
	if rig.proxy.decode.left != 4*perBody {
		t.Errorf("decode budget left %d after the exchanges, want %d", rig.proxy.decode.left, 4*perBody)
	}
	var cuts int
	for i, r := range recs {
		if r.Type != tape.TypeMessage {
			continue
		}
		if len(r.Frame) > perBody || len(r.Frame) < perBody-64 {
			t.Errorf("%s message of exchange %d recorded with %d bytes, want about %d", r.Dir, r.Exchange, len(r.Frame), perBody)
		}
		prev := recs[i-1]
		var note cutNote
		if prev.Event != tape.EventError || prev.Dir != r.Dir || prev.Exchange != r.Exchange || json.Unmarshal(prev.Data, &note) != nil ||
			!note.Truncated || note.Limit != cappedBody || note.Kept > perBody {
			t.Errorf("%s message of exchange %d not announced as cut: %s %s", r.Dir, r.Exchange, prev.Event, prev.Data)
			continue
		}
		cuts++
	}
	if cuts != 4 {
		t.Errorf("%d cut messages, want 4", cuts)
	}
}
