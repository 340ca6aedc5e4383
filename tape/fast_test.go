package tape

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/jsonrpc"
)

// readShared reads a whole tape with NextShared, copying nothing, and
// then with NextClassified and NextClassifiedMembers, checking that all
// give the same records and that the info (and members) are Classify's
// (ClassifyMembers').
func readShared(tb testing.TB, data []byte) ([]Record, error) {
	tb.Helper()
	recs, warn := readSharedWith(tb, data, func(r *Reader, rec *Record) error { return r.NextShared(rec) })
	var info jsonrpc.Info
	classified, warn2 := readSharedWith(tb, data, func(r *Reader, rec *Record) error {
		err := r.NextClassified(rec, &info)
		if err == nil {
			var want jsonrpc.Info
			if rec.Type == TypeMessage {
				want = jsonrpc.Classify(rec.Frame)
			}
			if !reflect.DeepEqual(info, want) {
				tb.Fatalf("NextClassified info %+v, Classify says %+v", info, want)
			}
		}
		return err
	})
	var members []jsonrpc.Member
	listed, warn3 := readSharedWith(tb, data, func(r *Reader, rec *Record) error {
		var err error
		members, err = r.NextClassifiedMembers(rec, &info, members)
		if err == nil {
			var want jsonrpc.Info
			var wantMembers []jsonrpc.Member
			if rec.Type == TypeMessage {
				wantMembers = jsonrpc.ClassifyMembers(rec.Frame, &want, nil)
			}
			if !reflect.DeepEqual(info, want) || len(members) != len(wantMembers) || (len(members) > 0 && !reflect.DeepEqual(members, wantMembers)) {
				tb.Fatalf("NextClassifiedMembers info %+v %v, ClassifyMembers says %+v %v", info, members, want, wantMembers)
			}
		}
		return err
	})
	for name, got := range map[string][]Record{"NextClassified": classified, "NextClassifiedMembers": listed} {
		w := map[string]error{"NextClassified": warn2, "NextClassifiedMembers": warn3}[name]
		if len(got) != len(recs) || (warn == nil) != (w == nil) || (warn != nil && warn.Error() != w.Error()) {
			tb.Fatalf("%s: %d records (%v), NextShared %d (%v)", name, len(got), w, len(recs), warn)
		}
		for i := range recs {
			if d := diffRecord(&recs[i], &got[i]); d != "" {
				tb.Fatalf("%s: record %d: %s", name, i+1, d)
			}
		}
	}
	return recs, warn
}

func readSharedWith(tb testing.TB, data []byte, next func(*Reader, *Record) error) ([]Record, error) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var recs []Record
	for {
		var rec Record
		err := next(r, &rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		_ = append(rec.Frame, strings.Repeat("X", 64)...) // must not write over what comes next
		recs = append(recs, rec)
	}
	if int64(len(recs)) != r.Records() {
		tb.Fatalf("Records() = %d after %d records", r.Records(), len(recs))
	}
	return recs, r.Warning()
}

// TestNextSharedMatchesNext: NextShared gives the records Next gives, for
// the Writer's tapes (fast path) and for odd frames and cut tails (general
// path), and records handed out stay intact while reading goes on across
// frames.
func TestNextSharedMatchesNext(t *testing.T) {
	http := []*Record{
		{Type: TypeEvent, Time: at(0), Session: "h", Event: EventOpen},
		{Type: TypeMessage, Time: at(1), Session: "h", Dir: ClientToServer, Exchange: 7, Stream: "post", Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{Type: TypeMessage, Time: at(2), Session: "h", Dir: ServerToClient, Exchange: 7, Stream: "sse", EventID: "ev-1", Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{Type: TypeMessage, Time: at(3), Session: "h", Dir: ServerToClient, NoEOL: true, Frame: []byte(`[{"jsonrpc":"2.0","method":"x"}]`)},
		{Type: TypeMessage, Time: at(4), Session: `q"uote`, Dir: ServerToClient, Frame: []byte(`{"a":"}"}`)},
		{Type: TypeMessage, Time: at(5), Dir: ClientToServer, Frame: []byte(`{"no":"session"}`)},
		{Type: TypeMessage, Time: at(6), Session: "h", Dir: "sideways", Frame: []byte(`{}`)},
	}
	cases := map[string][]byte{
		"traffic":    framedFixture(t, mcpTraffic(3000, 3)),
		"small":      writeTape(t, mcpTraffic(500, 4), WithFlushBytes(4<<10)),
		"odd frames": framedFixture(t, oddFrames()),
		"http":       writeTape(t, http),
	}
	full := cases["small"]
	cases["cut"] = full[:len(full)*2/3]
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			want, _, wantWarn := readTape(t, data, false)
			got, gotWarn := readShared(t, data)
			if (wantWarn == nil) != (gotWarn == nil) || (wantWarn != nil && wantWarn.Error() != gotWarn.Error()) {
				t.Fatalf("warning %v, want %v", gotWarn, wantWarn)
			}
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if d := diffRecord(want[i], &got[i]); d != "" {
					t.Fatalf("record %d: %s", i+1, d)
				}
			}
		})
	}
}

// rawTape compresses a header and lines as they are, bypassing the Writer.
func rawTape(tb testing.TB, lines ...string) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	text := `{"type":"header","format":1}` + "\n" + strings.Join(lines, "\n") + "\n"
	return enc.EncodeAll([]byte(text), nil)
}

// TestNextClassifiedUntrustedEnd: a frame that is not followed by the end
// of its record, or not one valid JSON value, is cut where the general
// parser cuts it.
func TestNextClassifiedUntrustedEnd(t *testing.T) {
	lines := []string{
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame":{"id":1,"method":"a"},"x":{"b":2}}`,
		`{"type":"message","time":2,"session":"s","dir":"c2s","frame":[{"id":1,"method":"a"},"]"],"y":[1]}`,
		`{"type":"message","time":3,"session":"s","dir":"c2s","frame":{"a":1 ]}`,
		`{"type":"message","time":4,"session":"s","dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"result":{}}}`,
	}
	got, warn := readShared(t, rawTape(t, lines...))
	want, _, wantWarn := readTape(t, rawTape(t, lines...), false)
	if len(got) != len(want) || (warn == nil) != (wantWarn == nil) {
		t.Fatalf("%d records (%v), want %d (%v)", len(got), warn, len(want), wantWarn)
	}
	for i := range want {
		if d := diffRecord(want[i], &got[i]); d != "" {
			t.Errorf("record %d: %s", i+1, d)
		}
	}
	if len(got) < 2 || string(got[0].Frame) != `{"id":1,"method":"a"}` {
		t.Fatalf("records %+v", got)
	}
}

// TestParseFast: lines in the Writer's form take the fast path with the
// general parser's result; every other line is refused by it.
func TestParseFast(t *testing.T) {
	fast := []string{
		`{"type":"message","time":12,"session":"s","dir":"c2s","exchange":3,"stream":"get","event_id":"e","noeol":true,"frame":{"a":[1,"}"]}}`,
		`{"type":"message","time":0012,"session":"s","dir":"s2c","frame":[{"x":"\"]"}]}`,
		`{"type":"message","time":9223372036854775807,"session":"s","dir":"s2c","frame":[]}`,
		"{\"type\":\"message\",\"time\":1,\"session\":\"é\x01\",\"dir\":\"c2s\",\"frame\":{}}",
	}
	slow := []string{
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame":{"a":1},"later":true}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame":{"a":1},"x":{"b":2}}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame":{"a":1} }`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame": {"a":1}}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame":"str"}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","text":"x"}`,
		`{"type":"message","time":1,"session":"s\"","dir":"c2s","frame":{}}`,
		`{"type":"message","time":1,"session":"","dir":"c2s","frame":{}}`,
		`{"type":"message","time":0,"session":"s","dir":"c2s","frame":{}}`,
		`{"type":"message","time":-1,"session":"s","dir":"c2s","frame":{}}`,
		`{"type":"message","time":1.5,"session":"s","dir":"c2s","frame":{}}`,
		`{"type":"message","time":9223372036854775808,"session":"s","dir":"c2s","frame":{}}`,
		`{"type":"message","time":12345678901234567890,"session":"s","dir":"c2s","frame":{}}`,
		`{"type":"message","time":1,"session":"s","dir":"up","frame":{}}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","exchange":0,"frame":{}}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","noeol":false,"frame":{}}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame":{"a":1}`,
		`{"type":"message","time":1,"session":"s","dir":"c2s","frame":{"a":"1}}`,
		`{"type":"event","time":1,"session":"s","event":"open"}`,
		`{"time":1,"type":"message","session":"s","dir":"c2s","frame":{}}`,
	}
	for _, line := range fast {
		var p lineParser
		var got Record
		if !p.parseFast([]byte(line), &got, false) {
			t.Errorf("fast path refused %s", line)
			continue
		}
		want, err := p.parse([]byte(line))
		if err != nil {
			t.Fatalf("general parser: %s: %v", line, err)
		}
		if d := diffRecord(want, &got); d != "" {
			t.Errorf("%s: %s", line, d)
		}
	}
	for _, line := range slow {
		var p lineParser
		var got Record
		if p.parseFast([]byte(line), &got, false) {
			t.Errorf("fast path took %s", line)
		}
	}
}

// TestNextSharedGoldenTapes reads every tape kept in testdata both ways.
func TestNextSharedGoldenTapes(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*.jsonl.zst"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl.zst"))
	paths = append(paths, more...)
	if len(paths) == 0 {
		t.Skip("no tapes in testdata")
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewReader(bytes.NewReader(data)); err != nil {
			continue // a deliberately broken file
		}
		want, _, wantWarn := readTape(t, data, false)
		got, gotWarn := readShared(t, data)
		if len(got) != len(want) || (wantWarn == nil) != (gotWarn == nil) {
			t.Fatalf("%s: %d records (warning %v), want %d (%v)", path, len(got), gotWarn, len(want), wantWarn)
		}
		for i := range want {
			if d := diffRecord(want[i], &got[i]); d != "" {
				t.Fatalf("%s: record %d: %s", path, i+1, d)
			}
		}
	}
}

// FuzzNextClassified: for any record line, NextClassified gives Next's
// record and Classify's info, and NextShared Next's record.
func FuzzNextClassified(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","time":12,"session":"s","dir":"c2s","exchange":3,"stream":"get","event_id":"e","noeol":true,"frame":{"a":[1,"}"]}}`,
		`{"type":"message","time":7,"session":"s","dir":"s2c","frame":{"a":1},"x":{}}`,
		`{"type":"message","time":7,"session":"s","dir":"s2c","frame":[{"id":1},"]"],"y":[]}`,
		`{"type":"event","time":7,"session":"s","event":"open"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		data := rawTape(t, line)
		if _, err := NewReader(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		want, _, wantWarn := readTape(t, data, false)
		got, warn := readShared(t, data)
		if len(got) != len(want) || (warn == nil) != (wantWarn == nil) {
			t.Fatalf("%d records (%v), want %d (%v)", len(got), warn, len(want), wantWarn)
		}
		for i := range want {
			if d := diffRecord(want[i], &got[i]); d != "" {
				t.Fatalf("record %d: %s", i+1, d)
			}
		}
	})
}

// FuzzParseFast: a line the fast path accepts is parsed the same way by
// the general parser.
func FuzzParseFast(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","time":12,"session":"s","dir":"c2s","exchange":3,"stream":"get","event_id":"e","noeol":true,"frame":{"a":[1,"}"]}}`,
		`{"type":"message","time":7,"session":"s","dir":"s2c","frame":[1,{"b":"\\"}]}`,
		`{"type":"message","time":7,"session":"s","dir":"s2c","frame":{"a":1},"x":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var p lineParser
		var got Record
		if !p.parseFast(line, &got, false) {
			return
		}
		want, err := p.parse(line)
		if err != nil {
			t.Fatalf("fast path took %q, the general parser says %v", line, err)
		}
		if d := diffRecord(want, &got); d != "" {
			t.Fatalf("%q: %s", line, d)
		}
		if !strings.HasPrefix(string(line), string(prefixMessage)) {
			t.Fatalf("fast path took %q", line)
		}
	})
}

func TestDigits(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		end  int
		ok   bool
	}{
		{"1,", 1, 1, true},
		{"12345678,", 12345678, 8, true},
		{"123456789,", 123456789, 9, true},
		{"1748779200000000000,", 1748779200000000000, 19, true},
		{"9223372036854775807,", 9223372036854775807, 19, true},
		{"9223372036854775808,", 0, 0, false},  // over int64
		{"99999999999999999999,", 0, 0, false}, // 20 digits
		{"0000000000000000001,", 1, 19, true},
		{"1234567:,", 0, 0, false},
		{"12345678", 0, 0, false}, // no ','
		{"1234/678,", 0, 0, false},
		{"1234567a9,", 0, 0, false},
		{",", 0, 0, false},
		{"12345678\xff1,", 0, 0, false},
	}
	for _, tc := range tests {
		n, end, ok := digits([]byte(tc.in), 0)
		if ok != tc.ok || (ok && (n != tc.want || end != tc.end)) {
			t.Errorf("digits(%q) = %d, %d, %v; want %d, %d, %v", tc.in, n, end, ok, tc.want, tc.end, tc.ok)
		}
	}
	for _, s := range []string{"00000000", "99999999", "12345678", "90817263"} {
		v, ok := eightDigits([]byte(s))
		if want, _ := strconv.ParseUint(s, 10, 64); !ok || v != want {
			t.Errorf("eightDigits(%q) = %d, %v", s, v, ok)
		}
	}
	for c := 0; c < 256; c++ {
		b := []byte("11111111")
		b[c%8] = byte(c)
		_, ok := eightDigits(b)
		if ok != isDigit(byte(c)) {
			t.Errorf("eightDigits(%q) ok = %v", b, ok)
		}
	}
}

// TestPlainString: the content up to the first quote, refused when a
// backslash comes before it or no quote ends it, on either side of the
// bytes it looks at one by one.
func TestPlainString(t *testing.T) {
	for _, n := range []int{0, 1, shortString - 1, shortString, shortString + 1, 3 * shortString} {
		plain := strings.Repeat("s", n)
		tests := []struct {
			in   string
			want string
			ok   bool
		}{
			{`x"` + plain + `"rest"`, plain, true},
			{`x"` + plain + `\"x"`, "", false},
			{`x"` + plain + `"\"`, plain, true},
			{`x"` + plain, "", false},
			{`x"\` + plain + `"`, "", false},
		}
		for _, tc := range tests {
			got, end, ok := plainString([]byte(tc.in), 2)
			if ok != tc.ok || string(got) != tc.want || ok && end != 2+len(tc.want)+1 {
				t.Errorf("plainString(%q) = %q, %d, %v; want %q, %v", tc.in, got, end, ok, tc.want, tc.ok)
			}
		}
	}
}

// TestDigitsTimePath: the loop-free path for 19 digits gives what the
// general one (anyDigits) and strconv give, for digit strings of every
// length around 19 with a bad byte anywhere and with or without the ','.
func TestDigitsTimePath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bad := []byte{'/', ':', 'a', ',', ' ', 0xff, 0x00, '0' + 10, '0' - 1}
	var cases [][]byte
	for n := 0; n < 4000; n++ {
		size := 15 + rng.IntN(7)
		b := make([]byte, size, size+8)
		for k := range b {
			b[k] = byte('0' + rng.IntN(10))
		}
		if n%3 == 0 {
			b[0] = '9' // near or over MaxInt64
		}
		if n%5 == 0 {
			b[rng.IntN(size)] = bad[rng.IntN(len(bad))]
		}
		if n%7 != 0 {
			b = append(b, ',')
		}
		cases = append(cases, b)
	}
	for at := 0; at < 20; at++ { // every bad byte at every place of a time
		for _, c := range bad {
			b := []byte("1785232800000066066,")
			b[at] = c
			cases = append(cases, b)
		}
	}
	for _, b := range cases {
		b = append(b, `"x":1}`...)
		got, gotEnd, gotOK := digits(b, 0)
		want, wantEnd, wantOK := anyDigits(b, 0)
		if got != want || gotEnd != wantEnd || gotOK != wantOK {
			t.Fatalf("digits(%q) = %d, %d, %v; anyDigits = %d, %d, %v", b, got, gotEnd, gotOK, want, wantEnd, wantOK)
		}
		comma := bytes.IndexByte(b, ',')
		ref, err := strconv.ParseInt(string(b[:max(comma, 0)]), 10, 64)
		if refOK := comma > 0 && comma <= 19 && err == nil; refOK != gotOK || gotOK && (uint64(ref) != got || gotEnd != comma) {
			t.Fatalf("digits(%q) = %d, %d, %v; strconv says %d, %v", b, got, gotEnd, gotOK, ref, err)
		}
	}
}
