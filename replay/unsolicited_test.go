package replay

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayUnsolicitedResponse checks a recorded response to an id that
// no request used (a server answering a notification, or with another id
// than it was sent): the live response to the same id is its twin, not
// extra, and one that does not come is missing after the settle margin,
// not after --timeout.
func TestReplayUnsolicitedResponse(t *testing.T) {
	const (
		notif = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		ping  = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	)
	resp := func(id string, n string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{"n":` + n + `}}` }
	tests := []struct {
		name                   string
		msgs                   [][2]string
		live                   []string // the server's answer to the notification
		exit, matched, missing int
		extra                  int
	}{
		{"answered alike", [][2]string{{"c2s", notif}, {"s2c", resp("7", "1")}}, []string{resp("7", "1")}, 0, 1, 0, 0},
		{"twice, in order", [][2]string{{"c2s", notif}, {"s2c", resp("7", "1")}, {"s2c", resp("7", "2")}}, []string{resp("7", "1"), resp("7", "2")}, 0, 2, 0, 0},
		{"between requests", [][2]string{{"c2s", notif}, {"s2c", resp(`"x"`, "1")}, {"c2s", ping}, {"s2c", resp("1", "0")}}, []string{resp(`"x"`, "1")}, 0, 2, 0, 0},
		{"another id", [][2]string{{"c2s", notif}, {"s2c", resp("7", "1")}}, []string{resp("8", "1")}, 1, 0, 1, 1},
		{"not answered", [][2]string{{"c2s", notif}, {"s2c", resp("7", "1")}}, nil, 1, 0, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := newFakeConn(func(frame []byte) []string {
				info := jsonrpc.Classify(frame)
				if info.Kind == jsonrpc.KindNotification {
					return tc.live
				}
				return []string{resp(string(info.ID.Raw), "0")}
			})
			start := time.Now()
			rep, err := Run(context.Background(), writeTape(t, tc.msgs), func(context.Context, *Session) (transport.Conn, error) { return conn, nil },
				WithMaxSpeed(), WithTimeout(20*time.Second), WithSettle(100*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			sr := rep.Sessions[0]
			if rep.ExitCode() != tc.exit || sr.Matched != tc.matched || sr.Missing != tc.missing || sr.Extra != tc.extra {
				t.Errorf("exit %d, %d matched, %d missing, %d extra; want %d, %d, %d, %d:\n%s",
					rep.ExitCode(), sr.Matched, sr.Missing, sr.Extra, tc.exit, tc.matched, tc.missing, tc.extra, text.String())
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v: the missing answer was waited for until --timeout", d)
			}
		})
	}
}
