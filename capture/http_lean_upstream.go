// A lean connection's upstream connection: kept between exchanges, looked
// at before reuse, dropped or aborted.

package capture

import (
	"context"
	"errors"
)

// upstream returns the connection's upstream connection, dialling one
// when there is none or the upstream closed it.
func (lc *leanConn) upstream(ctx context.Context) (*upstreamConn, error) {
	lc.mu.Lock()
	up := lc.up
	lc.mu.Unlock()
	// Bytes that wait on an idle connection (past the end of the last
	// response, or sent unasked since) answer nothing the client sent:
	// taken for the next response, they would desync the client. Such a
	// connection, like one the upstream closed, is not reused; net/http
	// does the same ("Unsolicited response received on idle HTTP channel").
	// The look (one non-blocking peek) is made before every reuse, however
	// short the idle time: a server may close a connection at any moment
	// (an idle timeout counted from its own last write, a shutdown, a cap
	// on requests per connection), and a request written on a closed one
	// gets no response; a POST, not replayable, cannot be sent again, and
	// the client would get a 502. net/http's Transport learns of the close
	// from the read each idle connection's goroutine keeps pending, which
	// costs that goroutine a wake-up per exchange instead.
	if up != nil && up.used && !up.Quiet() {
		lc.dropUpstream()
		up = nil
	}
	if up != nil {
		return up, nil
	}
	up, err := lc.p.dialUpstream(ctx)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.aborted {
		up.Close()
		return nil, errors.New("exchange cancelled")
	}
	lc.up = up
	return up, nil
}

// dropUpstream closes the upstream connection.
func (lc *leanConn) dropUpstream() {
	lc.mu.Lock()
	lc.closeUpstreamLocked()
	lc.mu.Unlock()
}

func (lc *leanConn) closeUpstreamLocked() {
	if lc.up != nil {
		lc.up.Close()
		lc.up = nil
	}
}

// abortUpstream cuts the exchange in progress: its upstream connection
// is closed, which ends any read or write on it.
func (lc *leanConn) abortUpstream() {
	lc.mu.Lock()
	lc.aborted = true
	if lc.up != nil {
		lc.up.Close()
	}
	lc.mu.Unlock()
}
