// Package http1 is mcptape's one HTTP/1.1 client implementation, shared by
// the recording proxy's upstream side (capture) and the load and replay
// client's lean transport (transport): a Conn writes a request head and
// body in one write (WriteRequest, with the header rules of a forwarding
// proxy or of net/http's client) and reads the response (ReadResponse),
// body framing included, as net/http reads it.
//
// Data flows through a Conn one exchange at a time, on the goroutine that
// owns it: WriteRequest, ReadResponse (interim 1xx responses handed to a
// callback or skipped), then the response body, read from the Conn's
// bufio.Reader. Whether the Conn may carry the next request is the
// caller's decision, helped by Quiet (nothing waits on the idle
// connection, the server has not closed it) and Retryable (a request
// that met a connection the server had closed may be sent again).
//
// Reading is net/http's, made cheaper for the common case: a response
// head that lies whole in the read buffer and keeps to a strict subset
// (response.go) is parsed in place with internal/httphead's primitives;
// every other head goes to http.ReadResponse, net/http being the single
// fallback. The differential tests and fuzz targets (diff_test.go) hold
// the fast reader to net/http's result on any input: head, body, trailer,
// errors and the bytes left for the next response. A framing fix made
// here is made for both callers.
//
// Requests that must not take this path (for the load client: https,
// proxies, Expect: 100-continue, bodies of unknown length; for the proxy:
// upgrades, chunked request bodies...) are the callers' to hand to
// net/http's own Transport or server.
package http1
