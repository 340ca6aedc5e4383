// Package httphead holds the primitives shared by mcptape's fast readers
// of HTTP/1.1 heads: the recording proxy's request reader (capture) and
// the response reader of the one HTTP/1.1 client (internal/http1), used by
// the proxy's upstream side and the load generator's lean client.
//
// Both readers take a head that lies whole in memory, cut it into lines
// themselves, and hand each line to this package: the status line to
// ParseStatusLine (or a request line to SplitRequestLine), each header line
// to SplitHeaderLine, whose canonical name and value go into the header
// with AddValue; the framing fields are then judged with ParseDigits,
// EqualFold, HasToken and CloseAfter. After a chunked body, ReadTrailer
// reads the trailer section from the connection's reader.
//
// What is accepted is a strict subset of HTTP/1.1, on purpose: anything
// unusual (obs-fold, white space before a colon, control bytes, signs or
// lists in a number, non-token names...) is refused, with ok false, so that
// the caller leaves the head to net/http (http.ReadRequest or
// http.ReadResponse), which then reads it as it always does. Whatever is
// accepted reads as net/http reads it: the differential fuzz targets here
// and in the callers hold it to that. Which heads a caller takes beyond
// these primitives (status codes, methods, framing headers) is the
// caller's decision, made at its call site.
//
// Nothing here allocates but CanonicalName for an uncommon name that is
// not canonical, AddValue once its pool is used up, PragmaCacheControl
// when it adds a field, and ReadTrailer (net/textproto's header reader);
// the small functions are meant to be inlined into the callers' loops.
package httphead
