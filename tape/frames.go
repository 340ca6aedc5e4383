package tape

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// This file walks the structure of zstd frames (RFC 8878, section 3.1)
// without decoding them, so that the Reader can take one whole frame off the
// input, check it with DecodeAll (content checksum included) and only then
// hand out its records.

const (
	zstdMagic      = 0xFD2FB528
	skippableMask  = 0xFFFFFFF0
	skippableMagic = 0x184D2A50
	maxBlockSize   = 128 << 10 // Block_Maximum_Size
)

var (
	// errTooBig reports a frame that may decompress to more than the
	// in-memory limit: the Reader decodes it as a stream instead.
	errTooBig = errors.New("frame too big to check in memory")
	// errNotZstd reports input that does not start with a zstd frame.
	errNotZstd = errors.New("not a zstd frame")
)

// frameInfo is what readFrame learnt about a frame.
type frameInfo struct {
	skipped int64  // a skippable frame: its size (nothing is appended)
	maxOut  uint64 // upper bound of the decompressed size
}

// readFrame appends the next whole frame from br to dst. It returns io.EOF
// when br is empty at a frame boundary, io.ErrUnexpectedEOF when the frame
// is cut, errNotZstd or another error when it is malformed, and errTooBig
// (with dst holding the bytes read so far) when the frame may decompress to
// more than limit bytes.
func readFrame(br *bufio.Reader, dst []byte, limit uint64) ([]byte, frameInfo, error) {
	var info frameInfo
	magic, err := br.Peek(4)
	if err != nil {
		if err == io.EOF && len(magic) == 0 {
			return dst, info, io.EOF
		}
		if err == io.EOF {
			return dst, info, io.ErrUnexpectedEOF
		}
		return dst, info, err
	}
	m := binary.LittleEndian.Uint32(magic)
	if m&skippableMask == skippableMagic {
		var hdr [8]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return dst, info, eofUnexpected(err)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[4:]))
		if k, err := br.Discard(int(n)); int64(k) < n {
			return dst, info, eofUnexpected(err)
		}
		info.skipped = 8 + n
		return dst, info, nil
	}
	if m != zstdMagic {
		return dst, info, errNotZstd
	}
	dst, err = readN(br, dst, 5) // magic and Frame_Header_Descriptor
	if err != nil {
		return dst, info, err
	}
	fhd := dst[len(dst)-1]
	if fhd&0x08 != 0 {
		return dst, info, errors.New("zstd frame header: reserved bit set")
	}
	single := fhd&0x20 != 0
	checksum := fhd&0x04 != 0
	rest := []int{0, 1, 2, 4}[fhd&3]     // Dictionary_ID
	fcsSize := []int{0, 2, 4, 8}[fhd>>6] // Frame_Content_Size
	if !single {
		rest++ // Window_Descriptor
	} else if fcsSize == 0 {
		fcsSize = 1
	}
	start := len(dst)
	dst, err = readN(br, dst, rest+fcsSize)
	if err != nil {
		return dst, info, err
	}
	var window uint64
	if !single {
		wd := dst[start]
		base := uint64(1) << (10 + wd>>3)
		window = base + base/8*uint64(wd&7)
	}
	fcs := dst[len(dst)-fcsSize:]
	switch fcsSize {
	case 1:
		info.maxOut = uint64(fcs[0])
	case 2:
		info.maxOut = uint64(binary.LittleEndian.Uint16(fcs)) + 256
	case 4:
		info.maxOut = uint64(binary.LittleEndian.Uint32(fcs))
	case 8:
		info.maxOut = binary.LittleEndian.Uint64(fcs)
	}
	known := fcsSize > 0
	if single {
		window = info.maxOut
	}
	if known && info.maxOut > limit {
		return dst, info, errTooBig
	}
	blockMax := uint64(min(window, maxBlockSize))
	var bound uint64 // decompressed size bound from the blocks seen so far
	for {
		dst, err = readN(br, dst, 3)
		if err != nil {
			return dst, info, err
		}
		h := dst[len(dst)-3:]
		bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		last := bh&1 != 0
		size := uint64(bh >> 3)
		var in uint64 // bytes of block content that follow
		switch (bh >> 1) & 3 {
		case 0: // raw
			in = size
			bound += size
		case 1: // RLE
			in = 1
			bound += size
		case 2: // compressed
			in = size
			bound += blockMax
		default:
			return dst, info, errors.New("zstd block header: reserved block type")
		}
		if size > maxBlockSize {
			return dst, info, fmt.Errorf("zstd block header: block size %d over %d", size, maxBlockSize)
		}
		if bound > limit {
			return dst, info, errTooBig
		}
		dst, err = readN(br, dst, int(in))
		if err != nil {
			return dst, info, err
		}
		if last {
			break
		}
	}
	if checksum {
		dst, err = readN(br, dst, 4)
		if err != nil {
			return dst, info, err
		}
	}
	if !known {
		info.maxOut = bound
	}
	return dst, info, nil
}

// readN appends exactly n bytes from br to dst; a short read is
// io.ErrUnexpectedEOF.
func readN(br *bufio.Reader, dst []byte, n int) ([]byte, error) {
	l := len(dst)
	dst = grow(dst, n)
	k, err := io.ReadFull(br, dst[l:l+n])
	if k < n {
		return dst[:l+k], eofUnexpected(err)
	}
	return dst[:l+n], nil
}

// grow makes room for n more bytes after len(b).
func grow(b []byte, n int) []byte { return growCapped(b, n, math.MaxInt) }

// growCapped is grow with a new capacity of at most limit bytes (or
// len(b)+n, when that is more).
func growCapped(b []byte, n, limit int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(min(2*cap(b), limit), len(b)+n))
	copy(nb, b)
	return nb
}

func eofUnexpected(err error) error {
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
