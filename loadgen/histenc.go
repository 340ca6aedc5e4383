package loadgen

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The HdrHistogram V2 compressed encoding of a series' histogram
// (Series.Histogram), written here rather than by the library's Encode:
// that one makes a new best-compression zlib writer (about 800 KB) and
// calls encoding/binary with reflection for every count, a millisecond
// or more per histogram, and a report writes one per series every
// interval. The bytes are the format's (hdrhistogram.Decode, and any
// HdrHistogram implementation, reads them): a header, then the counts up
// to the highest non-zero one as ZigZag LEB128 (64b9B) numbers, a run of
// zeros as its negated length, deflated (at the fastest level, with a
// writer kept for the next), then base64.
const (
	v2Cookie           int32 = hdrhistogram.V2EncodingCookieBase | 0x10 // 8-byte words
	v2CompressedCookie int32 = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

// zlibWriters keeps a few deflate writers (some 300 KB each) for
// encodeHist: a sync.Pool drops its items at every other collection, and
// a load generator collects several times between two intervals.
var zlibWriters struct {
	mu   sync.Mutex
	free []*zlib.Writer
}

// maxFreeWriters bounds zlibWriters.free.
const maxFreeWriters = 2

func getZlibWriter(dst io.Writer) *zlib.Writer {
	zlibWriters.mu.Lock()
	if n := len(zlibWriters.free); n > 0 {
		w := zlibWriters.free[n-1]
		zlibWriters.free = zlibWriters.free[:n-1]
		zlibWriters.mu.Unlock()
		w.Reset(dst)
		return w
	}
	zlibWriters.mu.Unlock()
	w, _ := zlib.NewWriterLevel(dst, zlib.BestSpeed) // a valid level: no error
	return w
}

func putZlibWriter(w *zlib.Writer) {
	w.Reset(nil)
	zlibWriters.mu.Lock()
	if len(zlibWriters.free) < maxFreeWriters {
		zlibWriters.free = append(zlibWriters.free, w)
	}
	zlibWriters.mu.Unlock()
}

// encodeHist returns h in the V2 compressed encoding, base64.
func encodeHist(h *hdrhistogram.Histogram) string {
	snap := h.Export()
	counts := snap.Counts
	last := len(counts) - 1
	for last > 0 && counts[last] == 0 {
		last--
	}
	counts = counts[:max(last, 0)+1]
	inner := make([]byte, 40, 64+len(counts)/8)
	for i := 0; i < len(counts); {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < len(counts) && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		inner = appendZigZag(inner, c)
	}
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	binary.BigEndian.PutUint32(inner[0:], uint32(v2Cookie))
	binary.BigEndian.PutUint32(inner[4:], uint32(len(inner)-40)) // the counts' bytes
	binary.BigEndian.PutUint32(inner[8:], 0)                     // normalizing index offset
	binary.BigEndian.PutUint32(inner[12:], uint32(int32(snap.SignificantFigures)))
	binary.BigEndian.PutUint64(inner[16:], uint64(snap.LowestTrackableValue))
	binary.BigEndian.PutUint64(inner[24:], uint64(snap.HighestTrackableValue))
	binary.BigEndian.PutUint64(inner[32:], math.Float64bits(ratio))

	var out bytes.Buffer
	out.Write(make([]byte, 8)) // cookie and length, set below
	zw := getZlibWriter(&out)
	zw.Write(inner) // to a bytes.Buffer: no error
	zw.Close()
	putZlibWriter(zw)
	b := out.Bytes()
	binary.BigEndian.PutUint32(b[0:], uint32(v2CompressedCookie))
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)-8))
	return base64.StdEncoding.EncodeToString(b)
}

// appendZigZag appends v as a ZigZag LEB128-64b9B number: 7 bits a byte,
// low bits first, at most 9 bytes (the ninth holds 8 bits).
func appendZigZag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for range 8 {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
