package analysis

import (
	"regexp"
	"strings"
	"testing"
)

// reportTags are the elements the report may hold: HTML and inline SVG,
// nothing that runs or fetches.
var reportTags = map[string]bool{
	"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
	"h1": true, "h2": true, "h3": true, "p": true, "br": true, "code": true, "span": true, "div": true, "footer": true,
	"table": true, "tr": true, "th": true, "td": true,
	"svg": true, "rect": true, "line": true, "text": true,
}

var (
	tagRE  = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>`)
	attrRE = regexp.MustCompile(`\s([a-zA-Z][a-zA-Z0-9:-]*)(\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+))?`)
)

// checkInert fails the test for any element outside reportTags and any
// event-handler attribute in page.
func checkInert(t *testing.T, page string) {
	t.Helper()
	for _, m := range tagRE.FindAllStringSubmatch(page, -1) {
		if !reportTags[strings.ToLower(m[1])] {
			t.Errorf("element <%s> in the report", m[1])
		}
		rest := attrRE.ReplaceAllStringFunc(m[2], func(a string) string {
			if name := attrRE.FindStringSubmatch(a)[1]; strings.HasPrefix(strings.ToLower(name), "on") {
				t.Errorf("event handler %s in %s", name, m[0])
			}
			return ""
		})
		if strings.TrimSpace(strings.TrimSuffix(rest, "/")) != "" {
			t.Errorf("unparsed attributes %q in %s", rest, m[0])
		}
	}
}

// TestReportHTMLInert: a tape whose tool names, tool output, error
// messages, peer names and file name hold markup renders it as text: no
// element beyond the report's own, no event handler; and every page the
// report writes uses only those elements (the stray <tlSpan> was not one).
func TestReportHTMLInert(t *testing.T) {
	const script = `<script>alert(1)</script>`
	const img = `"><img src=x onerror=alert(2)>`
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `"`, `\"`), "\n", "") }
	steps := []step{
		c2s(1*ms, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"`+esc(img)+`","version":"`+esc(script)+`"}}}`),
		s2c(2*ms, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"`+esc(script)+`","version":"1"}}}`),
		c2s(3*ms, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		c2s(4*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+esc(img)+`","arguments":{}}}`),
		s2c(5*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+esc(script+img)+`"}],"isError":true}}`),
		c2s(6*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+esc(script)+`","arguments":{}}}`),
		s2c(7*ms, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"`+esc(img+script)+`"}}`),
		c2s(8*ms, `{"jsonrpc":"2.0","id":"`+esc(img)+`","method":"`+esc(script)+`"}`),
	}
	path := tempTape(t, steps...)
	out, _ := writeReport(t, path, img+script)
	page := string(out)
	checkInert(t, page)
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;"} {
		if n := strings.Count(page, want); n < 4 {
			t.Errorf("%q escaped %d times, want it in the title, peers, tools and errors", want, n)
		}
	}
	hand, _ := writeReport(t, tempTape(t, reportTape()...), "hand-made")
	checkInert(t, string(hand))
}

// TestReportToolCardErrors: a tool's chart counts its JSON-RPC errors and
// its isError results apart, as the tools table does; its card said
// "1 error" for a tool whose row said 0 errors and 1 tool error, beside
// the tools/call card's "0 errors".
func TestReportToolCardErrors(t *testing.T) {
	path := tempTape(t,
		c2s(1*ms, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`),
		s2c(2*ms, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`),
		c2s(3*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flaky","arguments":{}}}`),
		s2c(4*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`),
		c2s(5*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broken","arguments":{}}}`),
		s2c(6*ms, `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}`),
	)
	out, _ := writeReport(t, path, "cards")
	page := string(out)
	for _, want := range []string{
		`<h3>flaky</h3><p class="meta">1 request, 0 errors, 1 tool error ·`,
		`<h3>broken</h3><p class="meta">1 request, 1 error ·`,
		`<h3>c2s tools/call</h3><p class="meta">2 requests, 1 error ·`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
