package main

// Rotation and retention flags of "mcptape record" in HTTP mode, and the
// tape (one file, or a rotated series) the proxy records into.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/tape"
)

// rotateFlags are --rotate, --rotate-size, --keep and --keep-size.
type rotateFlags struct {
	every    time.Duration
	size     sizeValue
	keep     time.Duration
	keepSize sizeValue
}

// rotateFlagNames are the flags of rotateFlags.
var rotateFlagNames = [...]string{"rotate", "rotate-size", "keep", "keep-size"}

// declare declares the flags on fs.
func (r *rotateFlags) declare(fs *pflag.FlagSet) {
	fs.DurationVar(&r.every, "rotate", 0, "HTTP mode: close the tape and start the next one every `DUR` (tapes are named -o's name plus -NUMBER-STARTTIME)")
	fs.Var(&r.size, "rotate-size", "HTTP mode: start the next tape once the open one holds `SIZE` (bytes, or with k, M, G: 100M)")
	fs.DurationVar(&r.keep, "keep", 0, "HTTP mode, rotating: delete closed tapes of this recording last written more than `DUR` ago (never the open one)")
	fs.Var(&r.keepSize, "keep-size", "HTTP mode, rotating: delete the oldest closed tapes while the recording's tapes hold more than `SIZE` (never the open one)")
}

// check validates the flags.
func (r *rotateFlags) check() error {
	rotating := r.every > 0 || r.size > 0
	switch {
	case !rotating && (r.keep > 0 || r.keepSize > 0):
		return usageError("--keep and --keep-size delete rotated tapes: give --rotate or --rotate-size too")
	}
	return nil
}

// recordTape is where the proxy's records go: one tape, or a rotated
// series.
type recordTape interface {
	capture.RecordWriter
	Close() error
}

// openRecordTape opens the tape of an HTTP recording at path: a rotated
// series when r asks for rotation, else one file (refused when it exists,
// unless force). Either recovers from write errors, reporting them to
// warnf.
func (r *rotateFlags) open(path string, force bool, h tape.Header, warnf func(string, ...any), opts ...tape.Option) (recordTape, error) {
	if r.every == 0 && r.size == 0 {
		return createTape(path, force, h, append(opts, recoverWrites(warnf))...)
	}
	return tape.NewRotator(tape.RotateConfig{Base: path, Every: r.every, Size: int64(r.size),
		Keep: r.keep, KeepSize: int64(r.keepSize), Header: h, Options: opts, Warnf: warnf})
}

// recoverWrites is the tape option of every recording to one file, stdio
// or HTTP: a write error (a full disk) loses records, counted, without
// stopping the forwarding or damaging the tape, and is said on warnf when
// it starts and when writing works again (a gap marker in the tape).
func recoverWrites(warnf func(string, ...any)) tape.Option {
	return tape.WithRecovery(func(g tape.Gap) {
		if g.Resumed {
			warnf("recording works again: %s lost since %s (a gap marker is in the tape)", english.Count(g.Lost, "record"), g.From.UTC().Format(time.RFC3339))
			return
		}
		warnf("recording failed, forwarding goes on and lost records are counted until writing works again: %v", g.Cause)
	})
}

// sizeValue is a byte count flag: 123, 64k, 100M, 2G (powers of 1024;
// "KiB", "MB" and the like are taken too).
type sizeValue int64

func (s *sizeValue) String() string {
	if *s == 0 {
		return "0"
	}
	return strconv.FormatInt(int64(*s), 10)
}

func (s *sizeValue) Type() string { return "size" }

func (s *sizeValue) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeValue(n)
	return nil
}

// parseSize parses a byte count with an optional k, M, G or T suffix.
func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	upper := strings.ToUpper(t)
	for _, suf := range []string{"IB", "B"} {
		if strings.HasSuffix(upper, suf) && len(upper) > len(suf) {
			upper = upper[:len(upper)-len(suf)]
			break
		}
	}
	mult := int64(1)
	if n := len(upper); n > 0 {
		switch upper[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			upper = upper[:n-1]
		}
	}
	f, err := strconv.ParseFloat(upper, 64)
	if err != nil || !(f >= 0) || math.IsInf(f, 0) || f*float64(mult) >= math.MaxInt64 { // !(f >= 0): NaN too
		return 0, fmt.Errorf("%q: want a size such as 500k, 100M or 2G", v)
	}
	return int64(f * float64(mult)), nil
}
