package transport

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// sendPost is what one POST of Send needs besides its Exchange: the request,
// its header map, its body reader. Sends take them from posts and give
// them back once the lean path is done with them (the request carried by
// net/http, or read by an event stream's reader, is left to the garbage
// collector: either may still hold it), so that a JSON exchange allocates
// none of them.
type sendPost struct {
	req     http.Request
	header  http.Header
	body    bytes.Reader
	rc      *postBody                     // body, as the request's Body
	getBody func() (io.ReadCloser, error) // the request's GetBody
	frame   []byte
}

// postBody is the body of a sendPost's request.
type postBody struct{ p *sendPost }

func (b *postBody) Read(p []byte) (int, error) { return b.p.body.Read(p) }

// Close does nothing: the frame is the caller's.
func (b *postBody) Close() error { return nil }

// posts recycles posts.
var posts = sync.Pool{New: func() any {
	p := &sendPost{header: make(http.Header, 8)}
	p.rc = &postBody{p}
	p.getBody = func() (io.ReadCloser, error) {
		p.body.Reset(p.frame)
		return p.rc, nil
	}
	return p
}}

// newPost returns a sendPost whose header map is empty.
func newPost() *sendPost { return posts.Get().(*sendPost) }

// request returns the POST of frame to the URL of tmpl (see
// HTTPConn.setPostURL) with the headers of p.header. Its context is
// context.Background: the exchange, passed along, governs it.
func (p *sendPost) request(tmpl *http.Request, frame []byte) *http.Request {
	p.frame = frame
	p.body.Reset(frame)
	p.req = *tmpl
	req := &p.req
	setHeader(req, p.header)
	req.ContentLength = int64(len(frame))
	req.Body, req.GetBody = p.rc, p.getBody
	return req
}

// detach makes the request's body a copy of the frame of its own: for a
// request given to net/http, which may read it after the answer came
// (http.RoundTripper allows it), while Send's caller may reuse the frame
// once Send returns. The body's reader starts over.
func detach(req *http.Request) {
	if b, ok := req.Body.(*postBody); ok {
		b.p.frame = bytes.Clone(b.p.frame)
		b.p.body.Reset(b.p.frame)
	}
}

// free gives p back for another Send.
func (p *sendPost) free() {
	clear(p.header)
	// p.req is overwritten by the next request; what it points to is
	// p's own, but for the URL of the connection
	p.body.Reset(nil)
	p.frame = nil
	posts.Put(p)
}
