package loadgen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// fakeTarget starts the test binary as a fake stdio MCP server in mode
// (see fakeStdioServer).
func fakeTarget(t *testing.T, mode string) Target {
	t.Helper()
	t.Setenv("LOADGEN_FAKE_SERVER", mode)
	return Target{Command: []string{os.Args[0]}}
}

// fakeStdioServer is a minimal stdio MCP server misbehaving on purpose,
// run by the test binary; it returns its exit status. Modes:
//
//	exit-after:N    answers initialize and N requests, then exits with
//	                status 3 on the next request, unanswered
//	mute-init       reads everything and answers nothing
//	drop-batches    answers requests and pings, silently ignores batches
//	batch-only      answers a batch with a batch, and every request sent
//	                alone but initialize with error -32600
//	linger          answers requests; ignores SIGTERM, and at the end of
//	                stdin runs on until killed
func fakeStdioServer(mode string, in io.Reader, out io.Writer) int {
	name, arg, _ := strings.Cut(mode, ":")
	limit, _ := strconv.Atoi(arg)
	if name == "linger" { // from the start: a SIGTERM may come as soon as stdin ends
		signal.Ignore(syscall.SIGTERM)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	w := bufio.NewWriter(out)
	answered := 0
	for sc.Scan() {
		line := sc.Bytes()
		info := jsonrpc.Classify(line)
		if name == "batch-only" && info.Kind == jsonrpc.KindBatch {
			members, _ := jsonrpc.Split(line)
			var answers []string
			for _, m := range members {
				if mi := jsonrpc.Classify(m); mi.Kind == jsonrpc.KindRequest {
					answers = append(answers, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, mi.ID.Raw))
				}
			}
			fmt.Fprintf(w, "[%s]\n", strings.Join(answers, ","))
			if err := w.Flush(); err != nil {
				return 4
			}
			continue
		}
		if name == "mute-init" || info.Kind != jsonrpc.KindRequest {
			continue // batches, notifications
		}
		switch {
		case info.Method == "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`+"\n", info.ID.Raw)
		case name == "batch-only":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"send a batch"}}`+"\n", info.ID.Raw)
		case name == "exit-after" && answered >= limit:
			w.Flush()
			return 3
		default:
			answered++
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", info.ID.Raw)
		}
		if err := w.Flush(); err != nil {
			return 4
		}
	}
	if name == "linger" {
		time.Sleep(time.Hour)
	}
	return 0
}
