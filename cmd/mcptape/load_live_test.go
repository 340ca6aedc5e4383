//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/mcptape/mcptape/internal/refserver"
)

// barFrame matches a frame of the live bar bounded by requests.
var barFrame = regexp.MustCompile(`load (\d+) of (\d+) requests +\[[=> -]*\] (\d+) ok/s, (\d+) in flight`)

// TestLoadLiveBarOnTerminal runs mcptape load with its stderr on a fresh
// pseudo-terminal (never sized: 0 columns, as under script(1)) for each
// kind of workload, --call, --scenario and --tape, and checks that the mpb
// bar is drawn with live figures: requests sent, the planned count, a
// non-zero rate, and a last frame at the planned count.
func TestLoadLiveBarOnTerminal(t *testing.T) {
	url := refURL(t, refserver.HTTPConfig{JSONResponse: true})
	sc := filepath.Join(t.TempDir(), "sc.json")
	if err := os.WriteFile(sc, []byte(`{"steps":[{"method":"tools/call","tool":"echo","args":{"message":"{{session}}"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tapePath := filepath.Join("..", "..", "testdata", "analysis", "gosdk-refserver.jsonl.zst")
	cases := []struct {
		name    string
		args    []string
		planned int
	}{
		{"call", []string{"load", "--url", url, "--sessions", "2", "--requests", "200", "--call", "tools/list"}, 200},
		{"scenario", []string{"load", "--url", url, "--sessions", "2", "--requests", "100", "--scenario", sc}, 100},
		{"tape", []string{"load", "--tape", tapePath, "--sessions", "3", "--speed", "max", "--", serveBinary(t), "serve"}, 27}, // 3 x 9: each session's server/discover is its setup
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			master, slave := openPTY(t)
			defer master.Close()
			var screen bytes.Buffer
			read := make(chan struct{})
			go func() { defer close(read); _, _ = io.Copy(&screen, master) }() // ends with EIO once the slave is closed
			var out bytes.Buffer
			code := run(context.Background(), &stdio{in: bytes.NewReader(nil), out: &out, err: slave}, c.args)
			slave.Close()
			<-read
			if code != 0 {
				t.Fatalf("code %d\n%s\n%s", code, out.String(), screen.String())
			}
			frames := barFrame.FindAllStringSubmatch(screen.String(), -1)
			if len(frames) == 0 {
				t.Fatalf("no bar on the terminal:\n%q", screen.String())
			}
			last := frames[len(frames)-1]
			sent, _ := strconv.Atoi(last[1])
			planned, _ := strconv.Atoi(last[2])
			rate, _ := strconv.Atoi(last[3])
			if sent != c.planned || planned != c.planned || rate == 0 {
				t.Errorf("last frame %q: want %d of %d requests at a non-zero rate", last[0], c.planned, c.planned)
			}
		})
	}
}
