package httphead

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/textproto"
)

// ErrTrailerEOF is the error of a chunked body cut short in its trailer
// section; its text is net/http's.
var ErrTrailerEOF = errors.New("http: unexpected EOF reading trailer")

// ErrTrailerTooLong is the error of a trailer section that does not end
// within the reader's buffer; its text is net/http's.
var ErrTrailerTooLong = errors.New("http: suspiciously long trailer after chunked body")

// ReadTrailer reads the trailer section that follows the last chunk of a
// chunked body from br, as net/http's body reader does, and merges its
// fields into resp.Trailer (a field read replaces one of the same name).
// The section must end within br's buffer (ErrTrailerTooLong otherwise);
// an end of input before its end is ErrTrailerEOF; a malformed field is
// net/textproto's error.
func ReadTrailer(br *bufio.Reader, resp *http.Response) error {
	buf, err := br.Peek(2)
	if string(buf) == "\r\n" {
		br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return ErrTrailerEOF
	}
	if err != nil {
		return err
	}
	if !trailerEndBuffered(br) {
		return ErrTrailerTooLong
	}
	hdr, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return ErrTrailerEOF
		}
		return err
	}
	if resp.Trailer == nil {
		resp.Trailer = http.Header(hdr)
	} else {
		maps.Copy(resp.Trailer, http.Header(hdr))
	}
	return nil
}

// trailerEndBuffered reports whether a blank line ends some first bytes of
// br (a CRLF CRLF), looking no further than br's buffer can hold.
func trailerEndBuffered(br *bufio.Reader) bool {
	for size := 4; ; size++ {
		buf, err := br.Peek(size)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
}
