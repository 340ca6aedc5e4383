package analysis

import (
	"cmp"
	"encoding/json"
	"slices"
)

// Sessionless HTTP traffic (a server that assigns no Mcp-Session-Id) is
// recorded as one session per TCP connection ("conn-N"), but a client may
// initialize on one connection and call on another: the go-sdk client and
// Node's fetch both do. So the handshake of such sessions is checked per
// client, not per connection. The tape records no client address; a
// client is known by its User-Agent, which the exchange's "http" event
// brings after the exchange's first message: the check waits for it.

// handshakeWait is the handshake state of one exchange of a sessionless
// session, waiting for the exchange's request headers.
type handshakeWait struct {
	init  bool     // the exchange carried an initialize
	early *Example // a request that needs a handshake before it
	sess  *sessionState
}

// clientHandshake is what a sessionless client has done so far.
type clientHandshake struct {
	initSent, flagged bool
}

// deferHandshake notes a request of a sessionless session (an initialize
// when init) until its exchange's request headers name the client.
func (in *Inspector) deferHandshake(it *Item, s *sessionState, init bool) {
	x := it.Rec.Exchange
	w := in.waits[x]
	if w == nil {
		if len(in.waits) >= maxOpenExchanges {
			clear(in.waits) // exchanges without events (a cut tape?): stay bounded
		}
		w = &handshakeWait{sess: s}
		in.waits[x] = w
	}
	if init {
		w.init = true
		return
	}
	if w.early == nil {
		w.early = &Example{Session: it.Rec.Session, Seq: it.Seq, OffsetNS: it.Rec.Time - in.origin,
			Detail: describeItem(it) + ": before initialize (sessionless: reported once per client)"}
	}
}

// sessionlessHandshake settles the waiting handshake of the exchange of
// the "http" event it, whose request headers are headers (nil when the
// event has none).
func (in *Inspector) sessionlessHandshake(it *Item, headers map[string]json.RawMessage) {
	w := in.waits[it.Rec.Exchange]
	if w == nil {
		return
	}
	delete(in.waits, it.Rec.Exchange)
	in.settleHandshake(w, headerValue(headers, "user-agent"))
}

// settleHandshake applies w to the client named key.
func (in *Inspector) settleHandshake(w *handshakeWait, key string) {
	c := in.clients[key]
	if c == nil {
		if len(in.clients) >= in.o.maxDistinct {
			key = Other
		}
		if c = in.clients[key]; c == nil {
			c = &clientHandshake{}
			in.clients[key] = c
		}
	}
	if w.init {
		c.initSent = true
	}
	if w.early != nil && !c.initSent && !c.flagged {
		c.flagged = true
		w.sess.violated(RuleBeforeInitialize)
		keepDetail(in, w.sess, violationDetails, func() RuleExample { return RuleExample{RuleBeforeInitialize, *w.early} })
		in.viol.add(RuleBeforeInitialize, func() Example { return *w.early })
	}
}

// finishHandshakes settles the handshakes whose exchanges had no "http"
// event (a cut tape), in exchange order, as of an unnamed client.
func (in *Inspector) finishHandshakes() {
	keys := make([]uint64, 0, len(in.waits))
	for x := range in.waits {
		keys = append(keys, x)
	}
	slices.SortFunc(keys, cmp.Compare[uint64])
	for _, x := range keys {
		in.settleHandshake(in.waits[x], "")
	}
	clear(in.waits)
}
