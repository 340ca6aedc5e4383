package tape

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// readAhead reads a whole tape with DecodeAhead(workers), with Next or
// (shared) NextShared, and returns the records, Records() and the warning.
func readAhead(tb testing.TB, data []byte, workers int, shared bool, opts ...ReaderOption) ([]*Record, int64, error) {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(data), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	if err := r.DecodeAhead(workers); err != nil {
		tb.Fatal(err)
	}
	var recs []*Record
	for {
		rec := &Record{}
		if shared {
			err = r.NextShared(rec)
		} else {
			rec, err = r.Next()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if shared {
			_ = append(rec.Frame, strings.Repeat("X", 64)...) // must not write over what comes next
		}
		recs = append(recs, rec)
	}
	return recs, r.Records(), r.Warning()
}

// TestDecodeAheadMatches: with decode-ahead a Reader returns the records
// and the warning it returns without, for the Writer's tapes, odd streams,
// cut and corrupt tapes and frames too big for memory; records handed out
// by NextShared stay intact.
func TestDecodeAheadMatches(t *testing.T) {
	small := writeTape(t, mcpTraffic(500, 4), WithFlushBytes(4<<10))
	framed, starts := framedTape(t, mcpTraffic(200, 5), 20)
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	skippable := binary.LittleEndian.AppendUint32(nil, 0x184D2A5E)
	skippable = binary.LittleEndian.AppendUint32(skippable, 3)
	skippable = append(skippable, "xyz"...)
	split := enc.EncodeAll([]byte(`{"type":"header","format":1}`+"\n\n"+`{"type":"message","fr`), nil)
	split = enc.EncodeAll([]byte(`ame":{"b":2}}`+"\n  \n"+`{"type":"event","event":"x"}`), split)
	split = append(split, skippable...)
	split = enc.EncodeAll([]byte(`{"type":"event","event":"y"}`), split)
	plain := bytes.Clone(zstdDecode(t, small))
	var one bytes.Buffer
	w, _ := zstd.NewWriter(&one, zstd.WithWindowSize(1<<16))
	w.Write(plain)
	w.Close()
	// Frames written by the Writer, then one too big for memory.
	bigTail := append(bytes.Clone(small[:starts[1]]), small[starts[1]:]...)
	bigTail = append(bigTail, one.Bytes()[4:]...) // not a frame: junk after the tape
	corrupt := bytes.Clone(framed)
	corrupt[(starts[4]+starts[5])/2] ^= 0x55

	type input struct {
		data []byte
		opts []ReaderOption
	}
	cases := map[string]input{
		"small frames":      {small, nil},
		"odd frames":        {framedFixture(t, oddFrames()), nil},
		"split lines":       {split, nil},
		"corrupt frame":     {corrupt, nil},
		"junk after":        {bigTail, nil},
		"stream frame":      {one.Bytes(), []ReaderOption{WithMaxRecord(64 << 10)}},
		"stream frame, cut": {one.Bytes()[:one.Len()/2], []ReaderOption{WithMaxRecord(64 << 10)}},
		"tape then stream":  {append(bytes.Clone(framed[:starts[3]]), one.Bytes()...), []ReaderOption{WithMaxRecord(64 << 10)}},
	}
	for cut := starts[len(starts)-4]; cut < len(framed); cut += 61 {
		cases[fmt.Sprint("cut at ", cut)] = input{framed[:cut], nil}
	}
	for name, in := range cases {
		want, _, wantWarn := readTape(t, in.data, false, in.opts...)
		for _, workers := range []int{1, 3} {
			for _, shared := range []bool{false, true} {
				got, n, warn := readAhead(t, in.data, workers, shared, in.opts...)
				where := fmt.Sprintf("%s, %d workers, shared %v", name, workers, shared)
				if (warn == nil) != (wantWarn == nil) || (warn != nil && warn.Error() != wantWarn.Error()) {
					t.Fatalf("%s: warning %v, want %v", where, warn, wantWarn)
				}
				if len(got) != len(want) || n != int64(len(want)) {
					t.Fatalf("%s: %d records (Records %d), want %d", where, len(got), n, len(want))
				}
				for i := range want {
					if d := diffRecord(want[i], got[i]); d != "" {
						t.Fatalf("%s: record %d: %s", where, i+1, d)
					}
				}
			}
		}
	}
}

func TestDecodeAheadOptions(t *testing.T) {
	data := writeTape(t, mcpTraffic(10, 1))
	for _, tc := range []struct {
		workers int
		ok      bool
	}{{0, false}, {1, true}, {16, true}, {17, false}} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.DecodeAhead(tc.workers); (err == nil) != tc.ok {
			t.Errorf("DecodeAhead(%d) = %v", tc.workers, err)
		}
		if tc.ok {
			a := r.ahead
			if err := r.DecodeAhead(tc.workers); err != nil || r.ahead != a {
				t.Errorf("DecodeAhead twice: %v, pipeline replaced %v", err, r.ahead != a)
			}
		}
		r.Close()
		r.Close()
	}
}

// TestDecodeAheadClose: closing a Reader in the middle of a tape stops its
// goroutines, which do not write over what it returned.
func TestDecodeAheadClose(t *testing.T) {
	data := writeTape(t, mcpTraffic(3000, 2), WithFlushBytes(4<<10))
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DecodeAhead(2); err != nil {
		t.Fatal(err)
	}
	var rec Record
	for range 10 {
		if err := r.NextShared(&rec); err != nil {
			t.Fatal(err)
		}
	}
	kept := bytes.Clone(rec.Frame)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, rec.Frame) {
		t.Fatalf("frame changed after Close")
	}
	if err := r.NextShared(&rec); err != io.EOF {
		t.Fatalf("NextShared after Close = %v, want io.EOF", err)
	}
}

// FuzzDecodeAhead: whatever the input, a Reader with decode-ahead returns
// the records, the warning and the error it returns without.
func FuzzDecodeAhead(f *testing.F) {
	f.Add(writeTape(f, mcpTraffic(60, 1), WithFlushBytes(1<<10)), uint8(1))
	f.Add(writeTape(f, []*Record{msg(1, ClientToServer, "\xff"), msg(2, ServerToClient, "a b")}), uint8(2))
	raw, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithNoEntropyCompression(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	two := raw.EncodeAll([]byte(`{"type":"header","format":1}`+"\n"+`{"type":"message","time":1,"te`), nil)
	f.Add(raw.EncodeAll([]byte(`xt":"a\n","session":"s"}`+"\n"+`{"type":"event","event":"e","data":{"x":[1]}}`), two), uint8(3))
	raw.Close()
	f.Fuzz(func(t *testing.T, data []byte, workers uint8) {
		read := func(ahead bool) (recs []*Record, warn, err error) {
			r, err := NewReader(bytes.NewReader(data), WithMaxRecord(4<<10))
			if err != nil {
				return nil, nil, err
			}
			defer r.Close()
			if ahead {
				if err := r.DecodeAhead(1 + int(workers)%4); err != nil {
					t.Fatal(err)
				}
			}
			for {
				rec, err := r.Next()
				if err == io.EOF {
					return recs, r.Warning(), nil
				}
				if err != nil {
					return recs, nil, err
				}
				recs = append(recs, rec)
			}
		}
		want, wantWarn, wantErr := read(false)
		got, warn, err := read(true)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || fmt.Sprint(warn) != fmt.Sprint(wantWarn) || len(got) != len(want) {
			t.Fatalf("decode-ahead: %d records, warning %v, error %v; without: %d, %v, %v", len(got), warn, err, len(want), wantWarn, wantErr)
		}
		for i := range want {
			if d := diffRecord(want[i], got[i]); d != "" {
				t.Fatalf("record %d: %s", i+1, d)
			}
		}
	})
}
