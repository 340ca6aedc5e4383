// Command floor is the floor of the load generator's benchmark
// (scripts/bench-load.sh): the least a Go load generator can do to keep
// the same number of keep-alive connections busy with the same request.
// It does strictly less than "mcptape load": each connection's goroutine
// writes the same pre-built POST bytes (built once, in the layout of the
// load client's requests), then reads the answer by its framing alone
// (Content-Length, or chunked to its last chunk: an event stream ends
// there too), with no JSON parsing, no id, no histogram, no report. Reads
// and writes are raw system calls, as the load client's (package rawio).
//
// Usage:
//
//	floor -url http://127.0.0.1:PORT/mcp -c 32 -d 10s -body FILE [-H 'Name: value']...
//
// It prints "REQUESTS SECONDS": the answers read, the time they took. An
// answer that is not 2xx, or a connection that fails or closes, ends the
// run with a one-line error and exit status 1 (a floor that skipped work
// would be no floor).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/rawio"
)

// headers are the repeatable -H flags.
type headers []string

func (h *headers) String() string { return strings.Join(*h, ", ") }

func (h *headers) Set(v string) error {
	name, _, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("header %q is not NAME: VALUE", v)
	}
	*h = append(*h, v)
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	rawURL := fs.String("url", "", "the endpoint to POST to (http://host:port/path)")
	conns := fs.Int("c", 32, "keep-alive connections, one request in flight on each")
	dur := fs.Duration("d", 10*time.Second, "how long to send")
	bodyFile := fs.String("body", "", "the request body (a file)")
	var hs headers
	fs.Var(&hs, "H", "a header NAME: VALUE to send (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("-url %q: not an http:// URL", *rawURL)
	}
	if *conns < 1 {
		return fmt.Errorf("-c %d: at least 1", *conns)
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		return fmt.Errorf("-body: %w", err)
	}
	req := request(u, hs, body)
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	n, took, err := drive(addr, req, *conns, *dur)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d %.6f\n", n, took.Seconds())
	return nil
}

// request returns the bytes of the POST, laid out as the load client
// writes its requests: request line, Host, User-Agent, Content-Length,
// then the other fields in sorted order.
func request(u *url.URL, hs headers, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: %d\r\n", u.RequestURI(), u.Host, len(body))
	lines := make([]string, 0, len(hs))
	for _, h := range hs {
		name, value, _ := strings.Cut(h, ":")
		lines = append(lines, strings.TrimSpace(name)+": "+strings.TrimSpace(value)+"\r\n")
	}
	slices.Sort(lines)
	for _, l := range lines {
		b.WriteString(l)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// drive runs conns connections for d and returns the answers read.
func drive(addr string, req []byte, conns int, d time.Duration) (int64, time.Duration, error) {
	var (
		stop  atomic.Bool
		total atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			for _, c := range cs[:i] {
				c.Close()
			}
			return 0, 0, err
		}
		cs[i] = rawio.Wrap(c)
	}
	start := time.Now()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			n, err := loop(c, req, &stop)
			total.Add(n)
			if err != nil {
				once.Do(func() { first = err; stop.Store(true) })
			}
		}()
	}
	wg.Wait()
	return total.Load(), time.Since(start), first
}

// loop sends req on c and reads each answer until stop.
func loop(c net.Conn, req []byte, stop *atomic.Bool) (int64, error) {
	br := bufio.NewReaderSize(c, 4<<10)
	var n int64
	for !stop.Load() {
		if _, err := c.Write(req); err != nil {
			return n, err
		}
		if err := readAnswer(br); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// errClosing is the error of an answer after which the server closes the
// connection.
var errClosing = errors.New("the server closes the connection (Connection: close)")

// readAnswer reads one answer from br: its head, then its body by its
// framing, discarded.
func readAnswer(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("reading the status line: %w", err)
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) || line[9] != '2' {
		return fmt.Errorf("answer %q, want HTTP/1.1 2xx", bytes.TrimSpace(line))
	}
	length, chunked := int64(-1), false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("reading the head: %w", err)
		}
		if len(line) <= 2 {
			break
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return fmt.Errorf("Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			return errClosing
		}
	}
	switch {
	case chunked:
		return readChunked(br)
	case length >= 0:
		_, err = br.Discard(int(length))
		return err
	}
	return errors.New("an answer with neither Content-Length nor chunked framing")
}

// readChunked discards a chunked body, its trailer included.
func readChunked(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("reading a chunk size: %w", err)
		}
		hex, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		size, err := strconv.ParseInt(string(hex), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("chunk size %q", hex)
		}
		if size == 0 {
			for { // the trailer, to its empty line
				if line, err = br.ReadSlice('\n'); err != nil {
					return fmt.Errorf("reading the trailer: %w", err)
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(size) + 2); err != nil {
			return err
		}
	}
}
