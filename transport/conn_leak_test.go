//go:build unix

package transport

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// settleGoroutines waits until at most base goroutines run, failing the
// test with a goroutine dump after a while.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConnsLeaveNoGoroutines(t *testing.T) {
	f := newFakeServer(t, func(f *fakeServer) { f.sse = true })
	legacy := newFakeLegacy(t, "/message")
	base := runtime.NumGoroutine()

	c := dialFake(t, f, WithGetStream())
	mustSend(t, c, []byte(initFrame))
	recvAnswer(t, c, "0")
	mustSend(t, c, []byte(inittedNote))
	mustSend(t, c, toolFrame(1, "progress"))
	mustSend(t, c, toolFrame(2, "hang")) // a stream left open
	time.Sleep(50 * time.Millisecond)
	c.Close()

	l, err := DialLegacySSE(context.Background(), legacy.srv.URL+"/sse")
	if err != nil {
		t.Fatal(err)
	}
	mustSend(t, l, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	recvAnswer(t, l, "1")
	l.Close()

	s := dialChild(t, "echo")
	mustSend(t, s, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	recvAnswer(t, s, "1")
	s.Close()

	// Close closed every client connection (the connections own their
	// clients here), so the test servers' goroutines end too.
	settleGoroutines(t, base)
}
