package capture

// End-to-end tests of "mcptape record" as a real process: the binary is
// built once per test run, and launched the way an MCP client launches it.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// binDir is the directory of the built binary, removed by TestMain.
var binDir string

// mcptapeBuild builds cmd/mcptape into a temporary directory, unless
// MCPTAPE_BIN names a binary to use instead (such as one built by make).
var mcptapeBuild = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("MCPTAPE_BIN"); bin != "" {
		return bin, nil
	}
	dir, err := os.MkdirTemp("", "mcptape-e2e-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "mcptape")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mcptape/mcptape/cmd/mcptape").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/mcptape: %v\n%s", err, out)
	}
	return bin, nil
})

// mcptapeBin returns the path of a freshly built mcptape binary.
func mcptapeBin(t testing.TB) string {
	t.Helper()
	bin, err := mcptapeBuild()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// removeBin deletes the built binary, if any; TestMain calls it last.
func removeBin() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// readTape reads a whole tape and fails the test if it is damaged.
func readTape(t testing.TB, path string) (*tape.Header, []tape.Record, error) {
	t.Helper()
	h, recs, warn, err := tryReadTape(path)
	if err != nil {
		t.Fatal(err)
	}
	return h, recs, warn
}

// tryReadTape is readTape returning its failure (a tape still being
// written may not have its header on disk yet).
func tryReadTape(path string) (h *tape.Header, recs []tape.Record, warn, err error) {
	r, err := tape.Open(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening the tape: %w", err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Header(), recs, r.Warning(), nil
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading the tape: %w", err)
		}
		recs = append(recs, *rec)
	}
}

// recordCmd returns "mcptape record -o TAPE ARGS -- test-peer" for mode.
func recordCmd(t testing.TB, tapePath string, args []string, mode string, env ...string) *exec.Cmd {
	t.Helper()
	peer, penv := peerCmd(t, mode, env...)
	argv := append([]string{"record", "-o", tapePath}, args...)
	cmd := exec.Command(mcptapeBin(t), append(append(argv, "--"), peer...)...)
	cmd.Env = penv
	return cmd
}

// closedTape checks that a tape was closed cleanly (the writer's stats
// event last, no damaged tail) and returns its records.
func closedTape(t testing.TB, path string) []tape.Record {
	t.Helper()
	_, recs, warn := readTape(t, path)
	if warn != nil {
		t.Fatalf("tape not closed cleanly: %v", warn)
	}
	if n := len(recs); n == 0 || recs[n-1].Event != tape.EventStats {
		t.Fatalf("tape does not end with the stats event: %d records", n)
	}
	return recs
}

// completeTape checks that a tape holds a whole session, closed cleanly.
func completeTape(t testing.TB, path string) []tape.Record {
	t.Helper()
	recs := closedTape(t, path)
	if n := len(recs); n < 3 || recs[0].Event != tape.EventOpen || recs[n-2].Event != tape.EventClose {
		t.Fatalf("tape does not hold open ... close: %d records", n)
	}
	return recs
}

func TestRecordByteExactE2E(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("moves 64 MiB lines both ways")
	}
	big := func(fill string, n int) string { return strings.Repeat(fill, n/len(fill)) }
	c2s := adversarial + "\n" +
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"blob":"` + big("abcdefgh", 64<<20) + `"}}` + "\n" +
		adversarial
	s2c := adversarial + "\n" +
		"\xff" + big("not json \xfe\r", 64<<20) + "\n" + // 64 MiB of invalid UTF-8 with CRs
		"\n" + adversarial
	stderr := "starting\r\n\xff\xfebinary\nno newline at the end"
	dir := t.TempDir()
	tp := filepath.Join(dir, "t.jsonl.zst")
	c2sOut := filepath.Join(dir, "c2s")
	// The peer still writes its 64 MiB when the client's stdin ends: under
	// -race on a loaded machine that took more than the default 5 s
	// grace, and the peer was stopped with SIGTERM mid-way (exit 143).
	// The grace itself is TestRecordLifecycleE2E's.
	cmd := recordCmd(t, tp, []string{"--grace", "2m"}, "script",
		"PEER_S2C="+writeTemp(t, "s2c", []byte(s2c)),
		"PEER_STDERR="+writeTemp(t, "stderr", []byte(stderr)),
		"PEER_C2S_OUT="+c2sOut)
	cmd.Stdin = strings.NewReader(c2s)
	var stdout, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcptape record: %v\n%s", err, errOut.Bytes())
	}
	got, _ := os.ReadFile(c2sOut)
	checkSame(t, "server received", got, []byte(c2s))
	checkSame(t, "client received", stdout.Bytes(), []byte(s2c))
	checkSame(t, "stderr (nothing but the server's)", errOut.Bytes(), []byte(stderr))
	recs := completeTape(t, tp)
	checkSame(t, "c2s in the tape", frames(recs, tape.ClientToServer), []byte(c2s))
	checkSame(t, "s2c in the tape", frames(recs, tape.ServerToClient), []byte(s2c))
	checkSame(t, "stderr in the tape", stderrStream(t, recs), []byte(stderr))
	if n := len(events(recs, tape.EventError)); n == 0 {
		t.Fatal("no invalid frame was flagged")
	}
}

func TestRecordLifecycleE2E(t *testing.T) {
	tests := []struct {
		name      string
		mode      string
		env       []string
		signal    syscall.Signal // sent to mcptape once the peer is ready
		closeIn   bool           // close mcptape's stdin once the peer is ready
		wantCode  int
		wantSent  string
		wantClose string
		// grace is mcptape's --grace: short where the case waits for it
		// to pass (a server that ignores what it got), long (10 s)
		// otherwise, so that a server slow to die on a loaded machine is
		// not sent the next signal (the SIGTERM case once saw a SIGKILL
		// follow with 500 ms). It is not waited for when the server dies.
		grace time.Duration
	}{
		{name: "stdin closed, server exits", mode: "echo", env: []string{"PEER_EXIT=4"}, closeIn: true,
			wantCode: 4, wantClose: ReasonClientEOF},
		{name: "stdin closed, server needs SIGTERM", mode: "deaf", closeIn: true,
			wantCode: 143, wantSent: `["SIGTERM"]`, wantClose: ReasonClientEOF, grace: 3 * time.Second},
		{name: "stdin closed, server needs SIGKILL", mode: "deaf", env: []string{"PEER_IGNORE=TERM"}, closeIn: true,
			wantCode: 137, wantSent: `["SIGTERM","SIGKILL"]`, wantClose: ReasonClientEOF, grace: 500 * time.Millisecond},
		{name: "SIGINT forwarded", mode: "deaf", env: []string{"PEER_TRAP_INT=7"}, signal: syscall.SIGINT,
			wantCode: 7, wantSent: `["SIGINT"]`, wantClose: ReasonSignal},
		{name: "SIGTERM forwarded", mode: "deaf", signal: syscall.SIGTERM,
			wantCode: 143, wantSent: `["SIGTERM"]`, wantClose: ReasonSignal},
		{name: "SIGTERM ignored", mode: "deaf", env: []string{"PEER_IGNORE=TERM"}, signal: syscall.SIGTERM,
			wantCode: 137, wantSent: `["SIGTERM","SIGKILL"]`, wantClose: ReasonSignal, grace: 500 * time.Millisecond},
		{name: "server exits by itself", mode: "early", env: []string{"PEER_EXIT=5"},
			wantCode: 5, wantClose: ReasonServerExit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
			s2c := strings.Repeat("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n", 3000)
			grace := cmp.Or(tt.grace, 10*time.Second)
			cmd := recordCmd(t, tp, []string{"--grace", grace.String()}, tt.mode,
				append(tt.env, "PEER_READY=1", "PEER_S2C="+writeTemp(t, "s2c", []byte(s2c)))...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			outc := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(stdout); outc <- b }()
			waitFor(t, func() bool { return bytes.HasPrefix(stderr.Bytes(), []byte("ready\n")) })
			if tt.closeIn {
				stdin.Close()
			}
			if tt.signal != 0 {
				cmd.Process.Signal(tt.signal)
			}
			var out []byte
			select {
			case out = <-outc: // our stdout is closed at the end, whatever the case
			case <-time.After(30 * time.Second):
				t.Fatal("mcptape's stdout was not closed")
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if code := 0; !errors.As(err, &ee) && err != nil || (ee != nil && ee.ExitCode() != tt.wantCode) || (ee == nil && tt.wantCode != 0) {
				if ee != nil {
					code = ee.ExitCode()
				}
				t.Fatalf("mcptape exited with %v (code %d), want code %d; stderr %q", err, code, tt.wantCode, stderr.Bytes())
			}
			if tt.mode == "early" {
				checkSame(t, "server output drained", out, []byte(s2c))
			}
			recs := completeTape(t, tp)
			exit := events(recs, tape.EventExit)
			cl := events(recs, tape.EventClose)
			if len(exit) != 1 || !strings.Contains(string(exit[0].Data), fmt.Sprintf(`"code":%d`, tt.wantCode)) ||
				!strings.Contains(string(exit[0].Data), tt.wantSent) || len(cl) != 1 || !strings.Contains(string(cl[0].Data), tt.wantClose) {
				t.Fatalf("exit %v close %v: want code %d sent %s closed by %s", exit, cl, tt.wantCode, tt.wantSent, tt.wantClose)
			}
			if tt.wantSent == "" && strings.Contains(string(exit[0].Data), "sent") {
				t.Fatalf("exit event %s: no signal should have been sent", exit[0].Data)
			}
		})
	}
}

func TestRecordCannotStartE2E(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	cmd := exec.Command(mcptapeBin(t), "record", "-o", tp, "--", "mcptape-no-such-server", "--flag")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 {
		t.Fatalf("exit %v, want code 127", err)
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "mcptape-no-such-server") || stdout.Len() != 0 {
		t.Fatalf("stderr %q, stdout %q: want one line naming the command and nothing on stdout", msg, stdout.Bytes())
	}
	recs := closedTape(t, tp)
	if ev := events(recs, tape.EventError); len(ev) != 1 || !strings.Contains(string(ev[0].Data), "mcptape-no-such-server") {
		t.Fatalf("tape records %v: want an error event naming the command", recs)
	}
}

func TestRecordDefaultPathE2E(t *testing.T) {
	tests := []struct {
		name    string
		env     func(home string) []string
		wantDir func(home string) string
	}{
		{"xdg", func(h string) []string {
			return []string{"XDG_STATE_HOME=" + filepath.Join(h, "state"), "HOME=/nonexistent"}
		},
			func(h string) string { return filepath.Join(h, "state", "mcptape", "tapes") }},
		{"home fallback", func(h string) []string { return []string{"XDG_STATE_HOME=", "HOME=" + h} },
			func(h string) string { return filepath.Join(h, ".local", "state", "mcptape", "tapes") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			peer, env := peerCmd(t, "echo")
			cmd := exec.Command(mcptapeBin(t), append([]string{"record", "--"}, peer...)...)
			cmd.Env = append(env, tt.env(home)...)
			cmd.Dir = t.TempDir() // a client may start us anywhere
			cmd.Stdin = strings.NewReader("{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, stderr.Bytes())
			}
			m := regexp.MustCompile(`^mcptape record: recording to (.+)\n$`).FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("stderr %q: want one line giving the tape's path", stderr.Bytes())
			}
			dir := tt.wantDir(home)
			if filepath.Dir(m[1]) != dir || !regexp.MustCompile(`^\d{8}T\d{6}\.\d{6}Z-\d+\.jsonl\.zst$`).MatchString(filepath.Base(m[1])) {
				t.Fatalf("tape at %s, want a time-and-pid name in %s", m[1], dir)
			}
			for path, mode := range map[string]os.FileMode{m[1]: 0o600, dir: 0o700 | os.ModeDir} {
				if fi, err := os.Stat(path); err != nil || fi.Mode() != mode {
					t.Fatalf("%s: %v, mode %v; want %v", path, err, fi.Mode(), mode)
				}
			}
			if recs := completeTape(t, m[1]); frames(recs, tape.ServerToClient) == nil {
				t.Fatal("no message in the tape")
			}
		})
	}
}

func TestRecordEnvRedactedE2E(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	c2sOut := filepath.Join(t.TempDir(), "c2s")
	cmd := recordCmd(t, tp, []string{"--env", "API_TOKEN=hunter2-secret", "--env", "PEER_C2S_OUT=" + c2sOut, "--cwd", t.TempDir()},
		"script", "PEER_S2C=")
	cmd.Stdin = strings.NewReader("x\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if b, _ := os.ReadFile(c2sOut); string(b) != "x\n" {
		t.Fatalf("the server did not get --env PEER_C2S_OUT: %q", b)
	}
	hdr, _, _ := readTape(t, tp)
	raw, _ := json.Marshal(hdr)
	var extra struct{ Env []string }
	json.Unmarshal(hdr.Extra, &extra)
	if bytes.Contains(raw, []byte("hunter2")) || !slices.Contains(hdr.Argv, "API_TOKEN=<redacted:8-15>") || !slices.Contains(extra.Env, "API_TOKEN=<redacted:8-15>") {
		t.Fatalf("header %s: the secret is not redacted", raw)
	}
	if hdr.Transport != "stdio" || hdr.Time == 0 || !strings.Contains(hdr.Target, filepath.Base(os.Args[0])) {
		t.Fatalf("header %s lacks transport, time or target", raw)
	}
}

// TestRecordCrashE2E kills mcptape with SIGKILL in the middle of traffic:
// the tape must still hold, in order, every message older than one flush
// interval (plus a scheduling margin), and the orphaned server must exit on
// its own once its stdin closes. A message counts as received by mcptape
// when the echo server's answer to it has come back through mcptape.
func TestRecordCrashE2E(t *testing.T) {
	t.Parallel()
	const flush = 50 * time.Millisecond
	const margin = 200 * time.Millisecond // scheduling slack on a loaded 2-core machine
	for run := range 4 {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
			cmd := recordCmd(t, tp, []string{"--flush", flush.String()}, "echo")
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var acked []time.Time // acked[i]: when the answer to message i came back
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					mu.Lock()
					acked = append(acked, time.Now())
					mu.Unlock()
				}
			}()
			// The kill comes 300-800 ms after the first answer: on a loaded
			// machine, mcptape may take longer than that to start.
			if _, err := fmt.Fprintf(stdin, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) > 0 })
			stop := time.Now().Add(time.Duration(300+rand.IntN(500)) * time.Millisecond)
			for i := 1; time.Now().Before(stop); i++ {
				if _, err := fmt.Fprintf(stdin, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n", i); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
			killed := time.Now()
			cmd.Process.Kill()
			cmd.Wait()
			mu.Lock()
			defer mu.Unlock()
			_, recs, _ := readTape(t, tp) // a cut tail is expected
			ids := map[tape.Direction][]int{}
			for _, r := range recs {
				if r.Type == tape.TypeMessage {
					var m struct{ ID int }
					json.Unmarshal(r.Frame, &m)
					ids[r.Dir] = append(ids[r.Dir], m.ID)
				}
			}
			old := 0
			for old < len(acked) && killed.Sub(acked[old]) >= flush+margin {
				old++
			}
			for _, dir := range []tape.Direction{tape.ClientToServer, tape.ServerToClient} {
				got := ids[dir]
				for i := range old {
					if i >= len(got) || got[i] != i {
						t.Fatalf("%s message %d, through mcptape %v before the kill, is missing (the tape has %d)", dir, i, killed.Sub(acked[i]), len(got))
					}
				}
			}
			t.Logf("%d messages older than %v before the kill, all recovered; %d in the tape", old, flush+margin, len(ids[tape.ServerToClient]))
			// The server, in its own process group, sees its stdin close.
			open := events(recs, tape.EventOpen)
			if len(open) != 1 {
				t.Fatal("no open event")
			}
			var od openData
			json.Unmarshal(open[0].Data, &od)
			waitFor(t, func() bool { return !peertest.Alive(od.Pid) })
		})
	}
}

// TestRecordKilledLeavesNoOrphanE2E kills mcptape with SIGKILL while its
// server ignores the end of its stdin: the parent-death signal must still
// end the server.
func TestRecordKilledLeavesNoOrphanE2E(t *testing.T) {
	t.Parallel()
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	cmd := recordCmd(t, tp, []string{"--flush", "20ms"}, "deaf", "PEER_READY=1")
	if _, err := cmd.StdinPipe(); err != nil { // kept open: no shutdown starts
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return bytes.HasPrefix(stderr.Bytes(), []byte("ready\n")) })
	// The open event reaches the disk at the writer's next flush: a fixed
	// sleep for it failed when a loaded machine delayed that flush.
	waitFor(t, func() bool {
		_, recs, _, err := tryReadTape(tp)
		return err == nil && len(events(recs, tape.EventOpen)) == 1
	})
	cmd.Process.Kill()
	cmd.Wait()
	_, recs, _ := readTape(t, tp)
	open := events(recs, tape.EventOpen)
	if len(open) != 1 {
		t.Fatal("no open event")
	}
	var od openData
	json.Unmarshal(open[0].Data, &od)
	waitFor(t, func() bool { return !peertest.Alive(od.Pid) })
}

// TestRecordManyInFlightE2E has the client send everything before reading
// anything, with the server answering out of order: nothing in the proxy
// may assume request/response alternation.
func TestRecordManyInFlightE2E(t *testing.T) {
	t.Parallel()
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	var in bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&in, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\"}\n", i)
	}
	cmd := recordCmd(t, tp, nil, "echo")
	cmd.Stdin = bytes.NewReader(in.Bytes())
	var out bytes.Buffer
	cmd.Stdout = &out
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { <-ctx.Done(); cmd.Process.Kill() }()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	checkSame(t, "echoed", out.Bytes(), in.Bytes())
	recs := completeTape(t, tp)
	checkSame(t, "c2s recorded", frames(recs, tape.ClientToServer), in.Bytes())
	checkSame(t, "s2c recorded", frames(recs, tape.ServerToClient), in.Bytes())
}
