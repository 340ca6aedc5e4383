package tape

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test re-executes the test binary as a writer process
// (TestCrashChild, switched on by crashEnv), which writes records
// continuously and reports on a pipe (fd 3) the sequence number and time of
// each record once Write has returned. The parent SIGKILLs it at a random
// moment and checks that the tape gives back, in order and byte-exactly,
// every record handed to Write more than crashFlush+crashMargin before the
// kill. crashMargin is the allowance for the flusher to get the CPU,
// compress and write.
//
// No fixed margin holds on an overloaded machine (on a 2-core machine
// running ten compilers, a 20 ms ticker was seen waking 500 ms late, and
// the whole child frozen for 170 ms), so the child also runs a heartbeat
// goroutine that sleeps crashBeat and reports when it woke and how late.
// The parent takes the last heartbeat before the kill as the kill time (a
// child frozen when killed is not blamed for the frozen time) and adds the
// worst lateness seen to the margin. On a quiet machine both are a few
// milliseconds, and the test is as strict as the contract.
const (
	crashEnv    = "MCPTAPE_TAPE_CRASH_CHILD"
	crashRuns   = 20
	crashFlush  = 20 * time.Millisecond
	crashMargin = 50 * time.Millisecond
	crashBeat   = 5 * time.Millisecond
)

// crashRecord is the deterministic record number seq of the child.
func crashRecord(seq int) *Record {
	var frame string
	switch {
	case seq%97 == 0: // large enough to cut a batch by size
		frame = fmt.Sprintf(`{"seq":%d,"blob":"%s"}`, seq, strings.Repeat("b", 30_000))
	case seq%13 == 0:
		frame = fmt.Sprintf("not json %d\n\xff", seq)
	case seq%7 == 0:
		frame = fmt.Sprintf("line %d\r", seq)
	default:
		frame = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"%s"}}}`, seq, strings.Repeat("m", seq%200))
	}
	dir := ClientToServer
	if seq%2 == 1 {
		dir = ServerToClient
	}
	return &Record{Type: TypeMessage, Time: int64(seq), Session: "crash", Dir: dir, Frame: []byte(frame)}
}

// TestCrashChild is the writer process of TestCrashRecovery.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process of TestCrashRecovery")
	}
	report := os.NewFile(3, "report")
	w, err := Create(path, testHeader(), WithFlushInterval(crashFlush), WithFlushBytes(64<<10), WithMaxQueued(256<<10))
	if err != nil {
		t.Fatal(err)
	}
	stop := time.Now().Add(30 * time.Second) // never outlive a lost parent for long
	go func() {                              // heartbeat
		last := time.Now()
		for {
			time.Sleep(crashBeat)
			now := time.Now()
			fmt.Fprintf(report, "beat %d %d\n", now.UnixNano(), now.Sub(last)-crashBeat)
			last = now
		}
	}()
	var line []byte
	for seq := 0; time.Now().Before(stop); seq++ {
		if err := w.Write(crashRecord(seq)); err != nil {
			t.Fatal(err)
		}
		line = fmt.Appendf(line[:0], "rec %d %d\n", seq, time.Now().UnixNano())
		if _, err := report.Write(line); err != nil {
			return // the parent is gone
		}
		if seq%200 == 199 { // bursts and pauses, like real traffic
			time.Sleep(time.Duration(seq%7) * time.Millisecond)
		}
	}
}

func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	dir := t.TempDir()
	for run := range crashRuns {
		path := filepath.Join(dir, fmt.Sprintf("crash%d.jsonl.zst", run))
		killAfter := time.Duration(40+rng.IntN(200)) * time.Millisecond
		recovered, required, lag, warn := crashOnce(t, path, killAfter)
		t.Logf("run %d: killed %v after the first record: %d records recovered, %d required (worst heartbeat lateness %v); warning: %v",
			run, killAfter, recovered, required, lag, warn)
	}
}

// crashOnce runs one child, kills it killAfter its first report and checks
// the tape. It returns the records recovered, how many were required, the
// worst heartbeat lateness and the reader's warning.
func crashOnce(t *testing.T, path string, killAfter time.Duration) (recovered, required int, lag time.Duration, warn error) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.ExtraFiles = []*os.File{pw}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()

	// Reports: "rec SEQ TIME" when Write returned, "beat TIME LATE" when
	// the heartbeat woke up LATE nanoseconds late.
	type report struct {
		kind      string
		seq, time int64 // for a beat: time, lateness
	}
	first := make(chan struct{})
	done := make(chan []report)
	go func() {
		var all []report
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var r report
			if _, err := fmt.Sscan(sc.Text(), &r.kind, &r.seq, &r.time); err != nil {
				continue
			}
			all = append(all, r)
			if r.kind == "rec" && r.seq == 0 {
				close(first)
			}
		}
		done <- all
	}()
	select {
	case <-first:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("child wrote no record in 20s")
	}
	time.Sleep(killAfter)
	killTime := time.Now().UnixNano()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	all := <-done

	// Every record handed to Write before the deadline must be on the tape.
	var worst, lastBeat int64
	var recs []report
	for _, r := range all {
		if r.kind == "beat" {
			worst, lastBeat = max(worst, r.time), max(lastBeat, r.seq)
		} else {
			recs = append(recs, r)
		}
	}
	lag = time.Duration(worst)
	allowed := crashFlush + crashMargin + lag
	deadline := min(killTime, lastBeat) - int64(allowed)
	required = 0
	for _, r := range recs {
		if r.time < deadline {
			required = max(required, int(r.seq)+1)
		}
	}
	rd, err := Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rd.Close()
	n := 0
	for ; ; n++ {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want := crashRecord(n)
		if d := diffRecord(want, rec); d != "" {
			t.Fatalf("%s: record %d: %s", path, n, d)
		}
	}
	if n < required {
		t.Fatalf("%s: %d records recovered, but %d were handed to Write more than %v (lag %v) before the last heartbeat %v before the kill; record %d was handed %v before the kill (warning: %v)",
			path, n, required, allowed, lag, time.Duration(killTime-lastBeat), n, time.Duration(killTime-recs[n].time), rd.Warning())
	}
	return n, required, lag, rd.Warning()
}
