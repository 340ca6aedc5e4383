package capture

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a scripted stdio server: when
// MCPTAPE_TEST_PEER names a mode, TestMain runs that peer instead of the
// tests. The peers below are deliberately unlike MCP servers where a test
// needs them to be (they ignore signals, hold pipes, emit garbage).
const peerEnv = "MCPTAPE_TEST_PEER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(peerEnv); mode != "" {
		os.Exit(runPeer(mode))
	}
	code := m.Run()
	removeBin()
	os.Exit(code)
}

// peerCmd returns the argv and environment that start this test binary as
// the peer named mode, with extra "K=V" settings.
func peerCmd(t testing.TB, mode string, env ...string) ([]string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}, append(append(os.Environ(), peerEnv+"="+mode), env...)
}

// runPeer runs one scripted peer and returns its exit code. Settings come
// from the environment:
//
//	PEER_EXIT     exit code when the peer ends by itself (default 0)
//	PEER_IGNORE   signals to ignore: "TERM", "INT", "TERM,INT"
//	PEER_TRAP_INT exit with this code on SIGINT, after writing "got SIGINT" to stderr
//	PEER_S2C      file whose bytes are written to stdout
//	PEER_STDERR   file whose bytes are written to stderr
//	PEER_C2S_OUT  file that receives every byte read from stdin
//	PEER_READY    write "ready" to stderr once signal handlers are installed
//	PEER_ASK      "answer" mode: server-to-client requests to send
//	PEER_FLOOD    "stubborn" mode: lines to write before reading stdin
//	FLOOR_*       the floors of the benchmarks (see bench_floor_test.go)
func runPeer(mode string) int {
	code, _ := strconv.Atoi(os.Getenv("PEER_EXIT"))
	ignore := os.Getenv("PEER_IGNORE")
	if ignore == "TERM" || ignore == "TERM,INT" {
		signal.Ignore(syscall.SIGTERM)
	}
	if ignore == "INT" || ignore == "TERM,INT" {
		signal.Ignore(syscall.SIGINT)
	}
	if trap := os.Getenv("PEER_TRAP_INT"); trap != "" {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT)
		go func() {
			<-c
			os.Stderr.WriteString("got SIGINT\n")
			n, _ := strconv.Atoi(trap)
			os.Exit(n)
		}()
	}
	if os.Getenv("PEER_READY") != "" {
		os.Stderr.WriteString("ready\n") // handlers are in place
	}
	switch mode {
	case "echo": // echo every line back until stdin ends
		io.Copy(os.Stdout, os.Stdin)
		return code
	case "script": // write the scripted bytes while recording stdin
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); writeFile(os.Stdout, os.Getenv("PEER_S2C")) }()
		go func() { defer wg.Done(); writeFile(os.Stderr, os.Getenv("PEER_STDERR")) }()
		out := io.Discard
		if path := os.Getenv("PEER_C2S_OUT"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				return 99
			}
			defer f.Close()
			out = f
		}
		io.Copy(out, os.Stdin)
		wg.Wait()
		return code
	case "deaf": // read stdin to its end, then wait for a signal
		io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Minute) // bounded, should a failed test leave it behind
		return code
	case "early": // write the scripted bytes and exit without reading stdin
		writeFile(os.Stdout, os.Getenv("PEER_S2C"))
		return code
	case "grandchild": // leave a grandchild holding stdout open, then exit
		exe, _ := os.Executable()
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), peerEnv+"=sleep")
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
		if err := gc.Start(); err != nil {
			return 98
		}
		os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\n")
		return code
	case "sleep":
		time.Sleep(10 * time.Second)
		return 0
	case "answer": // answer every request at once; send PEER_ASK requests of its own
		return runAnswerPeer(code)
	case floorForward:
		return runForwardFloor(os.Args[1:])
	case floorRelay:
		return runRelayFloor(os.Getenv("FLOOR_LISTEN"), os.Getenv("FLOOR_UPSTREAM"))
	case "stubborn": // write PEER_FLOOD lines to stdout before reading stdin
		n, _ := strconv.Atoi(os.Getenv("PEER_FLOOD"))
		line := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 200) + `"}}` + "\n")
		for range n {
			os.Stdout.Write(line)
		}
		io.Copy(io.Discard, os.Stdin)
		return code
	}
	fmt.Fprintf(os.Stderr, "unknown peer mode %q\n", mode)
	return 2
}

func writeFile(w io.Writer, path string) {
	if path == "" {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	io.Copy(w, f)
}
