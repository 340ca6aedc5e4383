package tape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// roundTripFrames are frames chosen to hit every storage form and edge.
var roundTripFrames = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{ "jsonrpc" : "2.0", "id" : "a b", "result" : { } }`, // JSON with spaces: kept verbatim
	"{\"a\":\t1}",
	"",
	" ",
	"\n",
	"\r\n",
	`{"jsonrpc":"2.0","id":1}` + "\r", // CRLF line with the LF stripped
	"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1\n}", // pretty-printed JSON
	` {"id":1}`,            // leading whitespace
	`{"id":1} `,            // trailing whitespace
	`{"id":1}{"id":2}`,     // two values
	`{"id":1,}`,            // invalid JSON
	`not json at all`,      // text
	"\xff\xfe\x00\x01",     // binary
	"{\"s\":\"\xc3\x28\"}", // JSON with invalid UTF-8 in a string
	"\x00",                 // NUL
	`"\u0000"`,             // escaped NUL as JSON
	`"é 日本語 😀"`,            // JSON string, multi-byte
	"é 日本語 😀\u2028\u2029",  // text, multi-byte and line separators
	`[` + strings.Repeat(`{"k":"v"},`, 5000) + `{}]`, // long JSON
	strings.Repeat("\\", 1000),                       // backslashes
	`{"a":"\"}\\"}`,                                  // quotes and braces in a string
	`-0.5E+10`,                                       // scalar JSON
	`null`,
}

func TestRoundTripFrames(t *testing.T) {
	var recs []*Record
	for i, f := range roundTripFrames {
		dir := ClientToServer
		if i%2 == 1 {
			dir = ServerToClient
		}
		recs = append(recs, &Record{Type: TypeMessage, Time: int64(i + 1), Session: fmt.Sprint("s", i%3), Dir: dir,
			Frame: []byte(f), NoEOL: i%5 == 0, Exchange: uint64(i % 4), Stream: []string{"", "post", "get"}[i%3],
			EventID: strings.Repeat("e", i%2)})
	}
	recs = append(recs, &Record{Type: TypeEvent, Time: 99, Session: "s0", Event: EventExit, Data: []byte(`{"code":0}`)})
	got, hdr, warn := readTape(t, writeTape(t, recs), true)
	if warn != nil {
		t.Fatal(warn)
	}
	if hdr.Format != FormatVersion || hdr.Tool != "mcptape" || hdr.Target != "refserver" || len(hdr.Argv) != 4 {
		t.Fatalf("header = %+v", hdr)
	}
	if len(got) != len(recs) {
		t.Fatalf("read %d records, wrote %d", len(got), len(recs))
	}
	for i := range recs {
		if d := diffRecord(recs[i], got[i]); d != "" {
			t.Errorf("record %d (%.40q): %s", i, recs[i].Frame, d)
		}
	}
}

// FuzzRoundTrip: any frame bytes and metadata come back exactly.
func FuzzRoundTrip(f *testing.F) {
	for i, s := range roundTripFrames {
		f.Add([]byte(s), "s1", uint8(i%2), i%3 == 0, uint64(i))
	}
	f.Fuzz(func(t *testing.T, frame []byte, session string, dir uint8, noeol bool, exchange uint64) {
		if !isValidUTF8String(session) {
			session = "x" // metadata strings are UTF-8 by contract; invalid bytes are replaced
		}
		d := []Direction{ClientToServer, ServerToClient}[dir%2]
		recs := []*Record{
			{Type: TypeMessage, Time: 1, Session: session, Dir: d, Frame: frame, NoEOL: noeol, Exchange: exchange},
			{Type: TypeMessage, Time: 2, Session: session, Dir: d, Frame: bytes.Repeat(frame, 3)},
		}
		got, _, warn := readTape(t, writeTape(t, recs), true)
		if warn != nil {
			t.Fatal(warn)
		}
		if len(got) != len(recs) {
			t.Fatalf("read %d records", len(got))
		}
		for i := range recs {
			if diff := diffRecord(recs[i], got[i]); diff != "" {
				t.Fatalf("record %d: %s", i, diff)
			}
		}
	})
}

func isValidUTF8String(s string) bool { return strings.ToValidUTF8(s, "") == s }

// TestRoundTripHugeFrames writes 32 MiB frames in each storage form, and
// a 4 MiB incompressible one (stored in raw zstd blocks). The big frames are
// compressible so that the test stays quick under the race detector.
func TestRoundTripHugeFrames(t *testing.T) {
	const size = 32 << 20
	random := make([]byte, 4<<20)
	rand.NewChaCha8([32]byte{1}).Read(random)
	jsonFrame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"blob":"` + strings.Repeat("abcdefgh", size/8) + `"}}`)
	textFrame := bytes.Repeat([]byte(strings.Repeat("text ", 200)+"\r\n"), size/1002)
	binFrame := bytes.Repeat([]byte("bin\xff\x00ary\xfe"), size/11) // invalid UTF-8: base64
	recs := []*Record{
		{Type: TypeMessage, Time: 1, Dir: ServerToClient, Frame: jsonFrame},
		{Type: TypeMessage, Time: 2, Dir: ServerToClient, Frame: binFrame},
		{Type: TypeMessage, Time: 3, Dir: ServerToClient, Frame: textFrame},
		{Type: TypeMessage, Time: 4, Dir: ServerToClient, Frame: random},
		{Type: TypeMessage, Time: 5, Dir: ClientToServer, Frame: []byte(`{"after":true}`)},
	}
	got, _, warn := readTape(t, writeTape(t, recs), true)
	if warn != nil {
		t.Fatal(warn)
	}
	if len(got) != len(recs) {
		t.Fatalf("read %d records", len(got))
	}
	for i := range recs {
		if d := diffRecord(recs[i], got[i]); d != "" {
			t.Errorf("record %d: %s", i, d)
		}
	}
}

// TestConcurrentWrites: records written from many goroutines all come back,
// each goroutine's in its order, and in time order: a record whose time is
// older than a batch already cut comes back with that batch's newest time,
// as the "stats" event counts.
func TestConcurrentWrites(t *testing.T) {
	const writers, each = 8, 500
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WithFlushBytes(4<<10), WithMaxQueued(16<<10))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			r := &Record{Type: TypeMessage, Session: fmt.Sprint(g)}
			for i := range each {
				r.Time = int64(i) + 1                                       // 0 is no time
				r.Frame = fmt.Appendf(r.Frame[:0], `{"g":%d,"i":%d}`, g, i) // buffer reused after Write
				if err := w.Write(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, warn := readTape(t, buf.Bytes(), true)
	if warn != nil {
		t.Fatal(warn)
	}
	next := make([]int, writers)
	var last, late int64
	for _, r := range got {
		if r.Time < last {
			t.Fatalf("record at %d after one at %d", r.Time, last)
		}
		last = r.Time
		if r.Type == TypeEvent {
			var st StatsData
			if err := json.Unmarshal(r.Data, &st); err != nil || st.Late != late {
				t.Errorf("stats %s (%v): want late %d", r.Data, err, late)
			}
			continue
		}
		var g, i int
		if _, err := fmt.Sscanf(string(r.Frame), `{"g":%d,"i":%d}`, &g, &i); err != nil {
			t.Fatalf("frame %q: %v", r.Frame, err)
		}
		if i != next[g] || r.Time < int64(i)+1 || r.Session != fmt.Sprint(g) {
			t.Fatalf("writer %d: got record %d (time %d), want %d", g, i, r.Time, next[g])
		}
		if r.Time != int64(i)+1 {
			late++
		}
		next[g]++
	}
	for g, n := range next {
		if n != each {
			t.Errorf("writer %d: %d records read, want %d", g, n, each)
		}
	}
}
