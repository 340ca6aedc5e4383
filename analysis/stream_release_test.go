package analysis

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// TestScannerReleasesInFileOrder: with sharedFrames and decode-ahead, the
// tape.Reader reuses the decompressed bytes of records the Scanner is done
// with. A record of an older tape held back by the Reader's time ordering
// while later records (of later frames and chunks) are yielded must keep
// its bytes: each item's frame is checked against the tape when it comes
// out, after the reader's goroutines had time to write over anything
// released too early.
func TestScannerReleasesInFileOrder(t *testing.T) {
	const n = 16 * defaultChunk
	var steps []step
	late := map[int]bool{10: true, defaultChunk + 3: true, 3*defaultChunk + 1: true, 9 * defaultChunk: true, 12*defaultChunk + 5: true}
	for i := 0; i < n; i++ {
		// A millisecond apart: tape.ReorderWindow holds a second of records
		// back, and the rest flows on while the tape is read.
		at := time.Duration(i) * time.Millisecond
		if late[i] { // yielded after the records of the next chunks
			at += time.Duration(3*defaultChunk) * time.Millisecond
		}
		steps = append(steps, c2s(at, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"record %d %s"}}`, i, sentenceOf(i))))
	}
	path := filepath.Join(t.TempDir(), "late.jsonl.zst")
	writeTape(t, path, steps, tape.WithFlushBytes(16<<10), tape.WithCallOrder()) // many frames, an older tape
	for _, workers := range []int{1, 3} {
		r, err := tape.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.DecodeAhead(workers); err != nil {
			t.Fatal(err)
		}
		sc, err := NewScanner(context.Background(), r, sharedFrames())
		if err != nil {
			t.Fatal(err)
		}
		seen, lateSeen := 0, 0
		for {
			it, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !it.IsMessage() {
				continue
			}
			runtime.Gosched() // let the reader's goroutines write over what they may
			var i int
			if _, err := fmt.Sscanf(string(it.Frame), `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"record %d`, &i); err != nil || i < 0 || i >= n || string(it.Frame) != steps[i].msg {
				t.Fatalf("%d workers: item %d: frame %q (%v)", workers, it.Seq, it.Frame, err)
			}
			if late[i] {
				lateSeen++
				if seen < i+defaultChunk {
					t.Fatalf("record %d came %d items after it was read, want it held back", i, seen-i)
				}
			}
			seen++
		}
		sc.Close()
		r.Close()
		if seen != n || lateSeen != len(late) {
			t.Fatalf("%d workers: %d messages (%d late), want %d (%d)", workers, seen, lateSeen, n, len(late))
		}
	}
}

// sentenceOf makes record i's text differ from its neighbours' in length
// and content.
func sentenceOf(i int) string {
	s := ""
	for k := 0; k < 3+i%7; k++ {
		s += words[(i*7+k*3)%len(words)] + " "
	}
	return s
}
