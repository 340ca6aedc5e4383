package loadgen

import "github.com/mcptape/mcptape/jsonrpc"

// getStats counts what came on the sessions' Streamable HTTP GET streams
// (WithGetStream): the server's own messages, outside any request.
type getStats struct {
	opened        int64 // sessions whose GET stream was open when they ended
	messages      int64 // messages received on GET streams
	notifications int64 // of which notifications
	requests      int64 // of which server requests (answered by the session)
}

// GetStreamReport says what the sessions' GET streams carried (set with
// WithGetStream). Messages counts every message received on a GET stream;
// Notifications and Requests are among them (server requests are answered:
// ping with an empty result, anything else with "method not found").
type GetStreamReport struct {
	Opened        int64 `json:"opened"`
	Messages      int64 `json:"messages"`
	Notifications int64 `json:"notifications"`
	Requests      int64 `json:"requests"`
}

// getMessage counts one message of kind k received on a GET stream.
func (s *stats) getMessage(k jsonrpc.Kind) {
	s.mu.Lock()
	s.get.messages++
	switch k {
	case jsonrpc.KindNotification:
		s.get.notifications++
	case jsonrpc.KindRequest:
		s.get.requests++
	}
	s.mu.Unlock()
}

// getStreamReport returns the GET stream figures; s.mu is held.
func (s *stats) getStreamReport() *GetStreamReport {
	g := s.get
	return &GetStreamReport{Opened: g.opened, Messages: g.messages, Notifications: g.notifications, Requests: g.requests}
}

// mergeGetStream adds b to a (either may be nil).
func mergeGetStream(a, b *GetStreamReport) *GetStreamReport {
	if b == nil {
		return a
	}
	if a == nil {
		a = &GetStreamReport{}
	}
	a.Opened += b.Opened
	a.Messages += b.Messages
	a.Notifications += b.Notifications
	a.Requests += b.Requests
	return a
}
