package transport

import (
	"testing"
	"testing/synctest"
	"time"
)

// closed reports whether c is closed.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestLanding(t *testing.T) {
	t.Run("grace after the write", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := NewLanding()
			time.Sleep(time.Second) // not written: never lands by time alone
			if closed(l.Written()) || closed(l.Landed()) {
				t.Fatal("written or landed before the write")
			}
			start := time.Now()
			l.Wrote()
			if !closed(l.Written()) {
				t.Fatal("Written not closed by Wrote")
			}
			<-l.Landed()
			if d := time.Since(start); d != LandGrace {
				t.Fatalf("landed %v after the write, want %v", d, LandGrace)
			}
			if closed(l.Returned()) {
				t.Fatal("returned by the grace alone")
			}
			l.Sent() // later: no second close
			if !closed(l.Returned()) {
				t.Fatal("Returned not closed by Sent")
			}
		})
	})
	t.Run("answer headers before the grace", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := NewLanding()
			l.Wrote()
			time.Sleep(LandGrace / 4)
			l.Sent()
			if !closed(l.Landed()) || !closed(l.Returned()) {
				t.Fatal("not landed and returned once Send returned")
			}
			time.Sleep(LandGrace) // the grace's timer runs out: no second close
		})
	})
	t.Run("send failed unwritten", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := NewLanding()
			l.Sent()
			if !closed(l.Landed()) || !closed(l.Returned()) || closed(l.Written()) {
				t.Fatal("a failed Send must land the frame unwritten")
			}
		})
	})
}
