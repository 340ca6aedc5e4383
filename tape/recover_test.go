package tape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"testing"
)

// faultyFile is an in-memory file whose writes fail while full is set,
// after writing part of what they were given (as a full disk does).
type faultyFile struct {
	mu   sync.Mutex
	data []byte
	off  int64
	full bool
}

func (f *faultyFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	if f.full {
		n = len(p) / 2
	}
	f.data = append(f.data[:f.off], p[:n]...)
	f.off += int64(n)
	if f.full {
		return n, syscall.ENOSPC
	}
	return n, nil
}

func (f *faultyFile) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data = f.data[:size]
	return nil
}

func (f *faultyFile) Seek(off int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if whence != io.SeekStart {
		return 0, errors.New("only SeekStart")
	}
	f.off = off
	return off, nil
}

func (f *faultyFile) setFull(on bool) {
	f.mu.Lock()
	f.full = on
	f.mu.Unlock()
}

// TestRecoveryGap: with WithRecovery, batches that cannot be written are
// counted lost, the tape reads back whole (no damaged tail), and a gap
// marker precedes the records written after the outage.
func TestRecoveryGap(t *testing.T) {
	for _, tc := range []struct {
		name             string
		before, during   int
		after            int
		wantGap, wantErr bool
	}{
		{name: "outage then recovery", before: 5, during: 7, after: 4, wantGap: true},
		{name: "no outage", before: 5, after: 4},
		{name: "outage to the end", before: 3, during: 6, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &faultyFile{}
			var gaps []Gap
			o, err := buildOptions([]Option{WithClock(fixedClock()), WithRecovery(func(g Gap) { gaps = append(gaps, g) })})
			if err != nil {
				t.Fatal(err)
			}
			w, err := newWriter("faulty", f, testHeader(), o)
			if err != nil {
				t.Fatal(err)
			}
			seq := 0
			write := func(n int) {
				for range n {
					seq++
					if err := w.Write(msg(int64(seq), ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","method":"m","params":{"n":%d}}`, seq))); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			write(tc.before)
			if tc.during > 0 {
				f.setFull(true)
				write(tc.during)
				if tc.after > 0 {
					f.setFull(false)
				}
			}
			write(tc.after)
			cerr := w.Close()
			if (cerr != nil) != tc.wantErr {
				t.Fatalf("Close: %v, want error %v", cerr, tc.wantErr)
			}
			recs, _, rerr := readTape(t, f.data, false)
			if rerr != nil {
				t.Fatalf("tape does not read back cleanly: %v", rerr)
			}
			var msgs []int
			var gap *GapData
			var last int64
			for _, r := range recs {
				if r.Time < last { // the gap marker's time agrees with its place
					t.Errorf("%s record at %d after one at %d", r.Event, r.Time, last)
				}
				last = r.Time
				switch {
				case r.Type == TypeMessage:
					var m struct{ Params struct{ N int } }
					if err := json.Unmarshal(r.Frame, &m); err != nil {
						t.Fatal(err)
					}
					msgs = append(msgs, m.Params.N)
				case r.Event == EventError:
					gap = new(GapData)
					if err := json.Unmarshal(r.Data, gap); err != nil {
						t.Fatal(err)
					}
					if len(msgs) != tc.before {
						t.Errorf("gap marker after %d messages, want %d", len(msgs), tc.before)
					}
				}
			}
			want := tc.before + tc.after
			if len(msgs) != want {
				t.Fatalf("%d messages read back, want %d", len(msgs), want)
			}
			for i, n := range msgs { // the lost ones are exactly those written during the outage
				wantN := i + 1
				if i >= tc.before {
					wantN += tc.during
				}
				if n != wantN {
					t.Fatalf("message %d is n=%d, want %d", i, n, wantN)
				}
			}
			st := w.Stats()
			if tc.wantGap != (gap != nil) {
				t.Fatalf("gap marker: %+v, want one: %v", gap, tc.wantGap)
			}
			if tc.wantGap {
				if gap.Gap.Lost != int64(tc.during) || st.Lost != int64(tc.during) || st.Gaps != 1 {
					t.Errorf("gap lost %d, stats lost %d gaps %d; want %d lost, 1 gap", gap.Gap.Lost, st.Lost, st.Gaps, tc.during)
				}
				if len(gaps) != 2 || gaps[0].Resumed || !gaps[1].Resumed || gaps[1].Lost != int64(tc.during) || !errors.Is(gaps[0].Cause, syscall.ENOSPC) {
					t.Errorf("reported %+v, want a start (ENOSPC) and a resume with %d lost", gaps, tc.during)
				}
			}
			if tc.wantErr && st.Lost < int64(tc.during) {
				t.Errorf("stats lost %d, want at least %d", st.Lost, tc.during)
			}
		})
	}
}

// TestRecoveryNeedsFile: NewWriter cannot recover (it cannot cut a partial
// frame off an io.Writer), so it refuses the option.
func TestRecoveryNeedsFile(t *testing.T) {
	if _, err := NewWriter(&bytes.Buffer{}, testHeader(), WithRecovery(nil)); err == nil {
		t.Fatal("NewWriter accepted WithRecovery")
	}
}
