package main

import (
	"bufio"
	"context"
	"io"
	"runtime/debug"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// gcPercent returns the collector's current target percentage.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneGC(t *testing.T) {
	base := gcPercent()
	t.Run("unset", func(t *testing.T) {
		t.Setenv("GOGC", "")
		restore := tuneGC(base + 321)
		if got := gcPercent(); got != base+321 {
			t.Errorf("GOGC unset: percentage %d, want %d", got, base+321)
		}
		restore()
		if got := gcPercent(); got != base {
			t.Errorf("after restore: %d, want %d", got, base)
		}
	})
	t.Run("user's GOGC wins", func(t *testing.T) {
		t.Setenv("GOGC", "50")
		restore := tuneGC(base + 321)
		if got := gcPercent(); got != base {
			t.Errorf("GOGC=50 in the environment: percentage changed to %d", got)
		}
		restore()
	})
}

// TestServeTunesGC: the reference server runs with its recommended GC
// percentage while it serves, and gives the old one back when it stops.
func TestServeTunesGC(t *testing.T) {
	t.Setenv("GOGC", "")
	base := gcPercent()
	if base == refserver.RecommendedGCPercent {
		t.Fatalf("the test process already runs at %d", base)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), &stdio{in: inR, out: outW, err: io.Discard}, []string{"serve"})
		outW.Close()
	}()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to ping: %v", err)
	}
	if got := gcPercent(); got != refserver.RecommendedGCPercent {
		t.Errorf("while serving (answered %q): GC percentage %d, want %d", line, got, refserver.RecommendedGCPercent)
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop at stdin EOF")
	}
	if got := gcPercent(); got != base {
		t.Errorf("after serve: GC percentage %d, want %d back", got, base)
	}
}
