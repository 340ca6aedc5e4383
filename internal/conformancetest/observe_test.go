package conformancetest

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestObserverSeesTheSuite checks observe.cjs, on which the unanswered
// check relies: it must see what the suite sends and reads through fetch
// (ping) and through undici (dns-rebinding-protection, which sets Host),
// and pair them. The go-sdk server answers the ping session fully and
// refuses the initialize with a foreign Host with a plain 403.
func TestObserverSeesTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers: not in -short mode")
	}
	conf := peertest.Conformance(t)
	srv := peertest.GoEverythingHTTP(t, t.Context(), false)
	tests := []struct {
		scenario   string
		sent       int // requests logged
		unanswered map[string]int
	}{
		{"ping", 2, map[string]int{}},
		{"dns-rebinding-protection", 2, map[string]int{"c2s initialize id 1": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			dir := t.TempDir()
			r := runSuite(t.Context(), conf, srv.URL, dir, true, scenarioTimeout, "--scenario", tt.scenario)
			if r.err != nil {
				t.Fatalf("suite: %v\n%s", r.err, r.output)
			}
			path := filepath.Join(dir, "observed.jsonl")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), `"method":`); n != tt.sent {
				t.Errorf("observed %d requests, want %d:\n%s", n, tt.sent, data)
			}
			got, err := unansweredObserved(path)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.unanswered) {
				t.Errorf("unanswered %v, want %v; observed:\n%s", got, tt.unanswered, data)
			}
		})
	}
}
