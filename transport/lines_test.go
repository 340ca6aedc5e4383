package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// refFrames is the reference framing of whole input s, written independently
// of the framers: split on "\n", the last piece is a NoEOL frame unless empty.
func refFrames(s []byte, max int) []Frame {
	var out []Frame
	parts := bytes.Split(s, []byte("\n"))
	for i, p := range parts {
		last := i == len(parts)-1
		if last && len(p) == 0 {
			break
		}
		fr := Frame{Data: p, Size: int64(len(p)), NoEOL: last}
		if len(p) > max {
			fr.Data, fr.Truncated = p[:max], true
		}
		out = append(out, fr)
	}
	return out
}

// collectFramer frames input written in the given chunk sizes (cycled).
func collectFramer(t testing.TB, in []byte, max int, chunks []int) []Frame {
	t.Helper()
	var got []Frame
	f, err := NewLineFramer(max, func(fr Frame) error {
		fr.Data = bytes.Clone(fr.Data)
		got = append(got, fr)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(in) > 0; i++ {
		n := len(in)
		if len(chunks) > 0 {
			n = min(max1(chunks[i%len(chunks)]), len(in))
		}
		w, err := f.Write(in[:n])
		if err != nil || w != n {
			t.Fatalf("Write(%d bytes) = %d, %v", n, w, err)
		}
		in = in[n:]
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// collectReader frames input read through a reader returning the given
// chunk sizes.
func collectReader(t testing.TB, in []byte, max int, chunks []int) []Frame {
	t.Helper()
	var src io.Reader = bytes.NewReader(in)
	if len(chunks) > 0 {
		src = &chunkReader{data: in, sizes: chunks}
	}
	r, err := NewLineReader(src, max)
	if err != nil {
		t.Fatal(err)
	}
	var got []Frame
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		fr.Data = bytes.Clone(fr.Data)
		got = append(got, fr)
	}
}

// chunkReader returns its data in reads of the given sizes (cycled).
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(max1(c.sizes[c.i%len(c.sizes)]), len(c.data), len(p))
	c.i++
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func sameFrames(t testing.TB, what string, got, want []Frame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d frames, want %d\ngot  %s\nwant %s", what, len(got), len(want), show(got), show(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !bytes.Equal(g.Data, w.Data) || g.NoEOL != w.NoEOL || g.Truncated != w.Truncated || g.Size != w.Size {
			t.Fatalf("%s: frame %d = %s, want %s", what, i, show(got[i:i+1]), show(want[i:i+1]))
		}
	}
}

func show(fs []Frame) string {
	var b strings.Builder
	for _, f := range fs {
		d := f.Data
		if len(d) > 40 {
			d = d[:40]
		}
		fmt.Fprintf(&b, "{%q noeol=%v trunc=%v size=%d} ", d, f.NoEOL, f.Truncated, f.Size)
	}
	return b.String()
}

func TestLineFraming(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20) // spans many reads and passes keepBuffer
	tests := []struct {
		name string
		in   string
		max  int
		want []Frame
	}{
		{"empty", "", 0, nil},
		{"one line", "{}\n", 0, []Frame{{Data: []byte("{}"), Size: 2}}},
		{"no final newline", "a\nb", 0, []Frame{{Data: []byte("a"), Size: 1}, {Data: []byte("b"), Size: 1, NoEOL: true}}},
		{"blank lines", "\n\n", 0, []Frame{{Data: []byte{}, Size: 0}, {Data: []byte{}, Size: 0}}},
		{"crlf kept", "a\r\nb\r\n", 0, []Frame{{Data: []byte("a\r"), Size: 2}, {Data: []byte("b\r"), Size: 2}}},
		{"lone cr", "\r", 0, []Frame{{Data: []byte("\r"), Size: 1, NoEOL: true}}},
		{"invalid utf8", "\xff\xfe\n", 0, []Frame{{Data: []byte("\xff\xfe"), Size: 2}}},
		{"nul bytes", "\x00\x00\n\x00", 0, []Frame{{Data: []byte("\x00\x00"), Size: 2}, {Data: []byte("\x00"), Size: 1, NoEOL: true}}},
		{"truncated", "abcdef\nab\n", 3, []Frame{{Data: []byte("abc"), Size: 6, Truncated: true}, {Data: []byte("ab"), Size: 2}}},
		{"truncated tail", "abcdef", 3, []Frame{{Data: []byte("abc"), Size: 6, Truncated: true, NoEOL: true}}},
		{"exactly max", "abc\n", 3, []Frame{{Data: []byte("abc"), Size: 3}}},
		{"big line", string(big) + "\n{}\n", 0, []Frame{{Data: big, Size: int64(len(big))}, {Data: []byte("{}"), Size: 2}}},
	}
	chunkings := [][]int{nil, {1}, {2, 3}, {7}, {1 << 16}}
	for _, tt := range tests {
		max := tt.max
		if max == 0 {
			max = DefaultMaxFrame
		}
		// The reference must agree with the hand-written expectation, so a
		// bug in the reference cannot hide one in the framers.
		sameFrames(t, tt.name+": reference", refFrames([]byte(tt.in), max), tt.want)
		for _, ch := range chunkings {
			if tt.name == "big line" && len(ch) > 0 && ch[0] < 1024 {
				continue // too slow one byte at a time
			}
			t.Run(fmt.Sprintf("%s/chunks%v", tt.name, ch), func(t *testing.T) {
				sameFrames(t, "framer", collectFramer(t, []byte(tt.in), tt.max, ch), tt.want)
				sameFrames(t, "reader", collectReader(t, []byte(tt.in), tt.max, ch), tt.want)
			})
		}
	}
}

func TestLineFramerEmitError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	f, err := NewLineFramer(0, func(Frame) error { calls++; return boom })
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.Write([]byte("a\nb\n"))
	if !errors.Is(err, boom) || n != 2 || calls != 1 {
		t.Fatalf("Write = %d, %v after %d calls; want 2, boom, 1", n, err, calls)
	}
	if _, err := f.Write([]byte("c\n")); err == nil {
		t.Fatal("Write after a failed emit succeeded")
	}
}

func TestLineFramerClose(t *testing.T) {
	var got []Frame
	f, _ := NewLineFramer(0, func(fr Frame) error { got = append(got, fr); return nil })
	f.Write([]byte("tail"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if len(got) != 1 || !got[0].NoEOL {
		t.Fatalf("got %s, want one NoEOL frame", show(got))
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

func TestLineFramerZeroCopy(t *testing.T) {
	in := []byte("abc\n")
	f, _ := NewLineFramer(0, func(fr Frame) error {
		if &fr.Data[0] != &in[0] {
			t.Error("a line wholly inside the chunk was copied")
		}
		return nil
	})
	f.Write(in)
}

func TestLineFramerReleasesBigBuffer(t *testing.T) {
	f, _ := NewLineFramer(0, func(Frame) error { return nil })
	f.Write(bytes.Repeat([]byte("x"), 2*keepBuffer))
	f.Write([]byte("\n"))
	if cap(f.buf) > keepBuffer {
		t.Fatalf("buffer of %d bytes kept after a big line", cap(f.buf))
	}
}

func TestBadArguments(t *testing.T) {
	if _, err := NewLineFramer(-1, func(Frame) error { return nil }); err == nil {
		t.Error("NewLineFramer accepted a negative maximum")
	}
	if _, err := NewLineFramer(0, nil); err == nil {
		t.Error("NewLineFramer accepted a nil emit")
	}
	if _, err := NewLineReader(strings.NewReader(""), -5); err == nil {
		t.Error("NewLineReader accepted a negative maximum")
	}
	if _, err := NewLineReader(nil, 0); err == nil {
		t.Error("NewLineReader accepted a nil source")
	}
}

func TestLineReaderError(t *testing.T) {
	boom := errors.New("boom")
	r, _ := NewLineReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), 0)
	var got []string
	var err error
	for {
		var fr Frame
		fr, err = r.Next()
		if err != nil {
			break
		}
		got = append(got, string(fr.Data))
	}
	if !errors.Is(err, boom) || strings.Join(got, ",") != "a,b" {
		t.Fatalf("frames %q then %v; want a,b then boom", got, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("Next after error = %v, want boom again", err)
	}
}

// FuzzLineFraming checks both framers against the reference framing for any
// input, any maximum and any chunking.
func FuzzLineFraming(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n"), 0, 1, 3)
	f.Add([]byte("a\r\n\n\xff\xfe\nlast"), 4, 2, 1)
	f.Add([]byte("\n\n\n"), 1, 5, 5)
	f.Add([]byte(""), 0, 1, 1)
	f.Add([]byte("no newline at all"), 3, 7, 2)
	f.Fuzz(func(t *testing.T, in []byte, max, c1, c2 int) {
		if max < 0 || max > 1<<20 {
			max = 0
		}
		c1, c2 = c1%64, c2%64
		m := max
		if m == 0 {
			m = DefaultMaxFrame
		}
		want := refFrames(in, m)
		ch := []int{max1(c1), max1(c2)}
		sameFrames(t, "framer", collectFramer(t, in, max, ch), want)
		sameFrames(t, "reader", collectReader(t, in, max, ch), want)
	})
}

func BenchmarkLineFramer(b *testing.B) {
	line := append(bytes.Repeat([]byte("a"), 199), '\n')
	chunk := bytes.Repeat(line, 64<<10/len(line))
	f, _ := NewLineFramer(0, func(Frame) error { return nil })
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		f.Write(chunk[:len(chunk)-50])
		f.Write(chunk[len(chunk)-50:])
	}
}
