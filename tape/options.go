package tape

import (
	"fmt"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Writer defaults.
const (
	DefaultFlushInterval = 100 * time.Millisecond // a frame is cut at least this often
	DefaultFlushBytes    = 1 << 20                // ... or when a batch reaches this many bytes
	DefaultMaxQueued     = 64 << 20               // bytes held before Write waits
	DefaultLevel         = 3                      // zstd level (3: klauspost SpeedDefault)

	// bounds of the zstd window the Writer picks from the flush bytes
	minEncoderWindow = 1 << 20
	maxEncoderWindow = 8 << 20
)

// Option configures a Writer. A bad value makes Create/NewWriter fail.
type Option func(*options) error

type options struct {
	flushInterval time.Duration
	flushBytes    int
	maxQueued     int
	level         zstd.EncoderLevel
	now           func() time.Time
	exclusive     bool
	onGap         func(Gap) // WithRecovery
	callOrder     bool      // WithCallOrder
}

func defaultOptions() options {
	return options{
		flushInterval: DefaultFlushInterval,
		flushBytes:    DefaultFlushBytes,
		maxQueued:     DefaultMaxQueued,
		level:         zstd.EncoderLevelFromZstd(DefaultLevel),
		now:           time.Now,
	}
}

// WithFlushInterval sets how often the current batch is cut into a zstd
// frame and written, at the latest (default 100 ms). It bounds what a
// killed process can lose. It must be positive.
func WithFlushInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("flush interval %v: must be positive", d)
		}
		o.flushInterval = d
		return nil
	}
}

// WithFlushBytes sets the batch size (uncompressed bytes of encoded
// records) at which a frame is cut before the interval ends (default 1 MiB).
func WithFlushBytes(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("flush bytes %d: must be positive", n)
		}
		o.flushBytes = n
		return nil
	}
}

// WithMaxQueued sets the bound on encoded bytes held in memory and not yet
// written (default 64 MiB). While it is reached, Write waits; it must be at
// least the flush bytes (checked when all options are applied).
func WithMaxQueued(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("max queued %d: must be positive", n)
		}
		o.maxQueued = n
		return nil
	}
}

// WithLevel sets the zstd compression level, 1 to 22 as for the zstd
// command. klauspost/compress maps it to one of its four encoders: 1-2
// fastest, 3-5 default, 6-9 better, 10-22 best. Default 3.
func WithLevel(level int) Option {
	return func(o *options) error {
		if level < 1 || level > 22 {
			return fmt.Errorf("zstd level %d: must be 1 to 22", level)
		}
		o.level = zstd.EncoderLevelFromZstd(level)
		return nil
	}
}

// WithClock sets the clock used for the header time (when the Header has
// none) and the time of the closing "stats" event; tests use it to make
// tapes reproducible.
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return fmt.Errorf("clock: must not be nil")
		}
		o.now = now
		return nil
	}
}

// WithExclusive makes Create refuse a path that already exists, with an
// error wrapping fs.ErrExist, instead of truncating it: a tape is not
// overwritten by mistake. The check and the creation are one step (O_EXCL).
// NewWriter ignores it.
func WithExclusive() Option {
	return func(o *options) error {
		o.exclusive = true
		return nil
	}
}

// WithCallOrder makes the Writer write the records in the order of the
// Write calls, with their own times, and leave Header.TimeOrdered unset:
// the tapes of writers older than time order, which a Reader puts in time
// order itself. It exists to test readers of such tapes.
func WithCallOrder() Option {
	return func(o *options) error {
		o.callOrder = true
		return nil
	}
}

func buildOptions(opts []Option) (options, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, fmt.Errorf("tape: option: %w", err)
		}
	}
	if o.maxQueued < o.flushBytes {
		return o, fmt.Errorf("tape: option: max queued %d is below flush bytes %d", o.maxQueued, o.flushBytes)
	}
	return o, nil
}

// Reader defaults.
const (
	// DefaultMaxRecord is the longest record line a Reader accepts by
	// default: MaxRecordFor(256 MiB), so that a message of the capture
	// proxy's largest default frame (transport.DefaultMaxFrame, 256 MiB)
	// reads back in its longest storage form, base64 (341.3 MiB), with
	// 1 MiB for its other keys: 358,962,520 bytes.
	DefaultMaxRecord = (256<<20+2)/3*4 + recordOverhead
	// recordOverhead is what MaxRecordFor allows beyond the frame's bytes:
	// the record's other keys (type, time, session, dir, stream...).
	recordOverhead = 1 << 20
	// memFrameLimit: a frame that may decompress to more than this is
	// decoded as a stream instead of verified whole in memory.
	memFrameLimit = 64 << 20
)

// MaxRecordFor returns the record limit (WithMaxRecord) a Reader needs for
// messages of up to frameBytes bytes, whatever their storage form: the
// Writer never makes a frame's stored form longer than its base64 form,
// 4*ceil(frameBytes/3) bytes, to which it adds 1 MiB for the record's other
// keys. A negative frameBytes counts as 0.
func MaxRecordFor(frameBytes int) int {
	frameBytes = max(frameBytes, 0)
	return (frameBytes+2)/3*4 + recordOverhead
}

// ReaderOption configures a Reader.
type ReaderOption func(*readerOptions) error

type readerOptions struct {
	maxRecord int
	fileOrder bool // WithFileOrder
}

// WithFileOrder makes a Reader return the records of a tape without
// Header.TimeOrdered in file order too, instead of putting them in time
// order (which holds records back until a newer one is read): for a live
// tail of a growing tape. Tapes with TimeOrdered are read in file order
// anyway, which is their time order. Nor is a "stats" event held back to
// be summed with those of the tapes joined after it (segment.go): each
// tape's comes where it is, the end of a live tail.
func WithFileOrder() ReaderOption {
	return func(o *readerOptions) error {
		o.fileOrder = true
		return nil
	}
}

// WithMaxRecord sets the longest record line (decompressed bytes) a Reader
// accepts, default DefaultMaxRecord; MaxRecordFor gives the limit for a
// largest message size. It bounds the Reader's memory: a longer line ends
// reading with a warning. Frames that can decompress to more than
// min(n, 64 MiB) are decoded as a stream rather than checked whole first.
func WithMaxRecord(n int) ReaderOption {
	return func(o *readerOptions) error {
		if n < 1024 {
			return fmt.Errorf("max record %d: must be at least 1024", n)
		}
		o.maxRecord = n
		return nil
	}
}
