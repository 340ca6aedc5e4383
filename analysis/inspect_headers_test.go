package analysis

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/tape"
)

// headerTool is a tool whose "region" argument goes in Mcp-Param-Region.
var headerTool = &mcp.Tool{Name: "lookup", Description: "find a record", InputSchema: map[string]any{
	"type": "object",
	"properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"id":     map[string]any{"type": "integer"},
	},
}}

// TestMcpHeadersRealPeers: the Go SDK's client and server on 2026-07-28
// (stateless Streamable HTTP) send and accept Mcp-Method, Mcp-Name and
// Mcp-Param-Region; recorded through the proxy, the tape holds them and
// inspect finds them consistent with the bodies.
func TestMcpHeadersRealPeers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "header-server", Version: "1"}, nil)
	srv.AddTool(headerTool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found"}}}, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer up.Close()
	out := filepath.Join(t.TempDir(), "t.jsonl.zst")
	httpProxy(t, ctx, up.URL+"/mcp", out, func(url string) {
		client := mcp.NewClient(&mcp.Implementation{Name: "header-client", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"region": "eu-wést", "id": 7}})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
	})
	raw := tapeText(t, out)
	for _, h := range []string{`"Mcp-Method":["tools/call"]`, `"Mcp-Name":["lookup"]`, `"Mcp-Param-Region":["=?base64?`} {
		if !strings.Contains(raw, h) {
			t.Fatalf("the tape lacks %s: the peers did not send it", h)
		}
	}
	rep, err := Inspect(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	checkNoErrors(t, rep)
	if rep.Sessions[0].ProtocolVersion != headersVersion {
		t.Errorf("protocol %q", rep.Sessions[0].ProtocolVersion)
	}
}

// tapeText returns the records of a tape as JSON lines.
func tapeText(t *testing.T, path string) string {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b strings.Builder
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Type == tape.TypeEvent {
			b.Write(rec.Data)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestMcpHeaders: hand-made 2026-07-28 exchanges whose headers are
// missing or disagree with the body.
func TestMcpHeaders(t *testing.T) {
	const list = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"lookup","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}}]}}`
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup","arguments":` + args + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	}
	exchange := func(x uint64, msg, headers string) []step {
		return []step{
			onExchange(x, c2s(time.Duration(x)*ms, msg)),
			onExchange(x, evt(time.Duration(x)*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{"Mcp-Protocol-Version":["2026-07-28"]`+headers+`}}`)),
		}
	}
	listed := append(exchange(1, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, `,"Mcp-Method":["tools/list"]`),
		onExchange(1, s2c(1*ms, list)))
	tests := []struct {
		name              string
		msg, headers      string
		missing, mismatch int64
	}{
		{"all agree", call(`{"region":"eu","n":5}`), `,"Mcp-Method":["tools/call"],"Mcp-Name":["lookup"],"Mcp-Param-Region":["eu"],"mcp-param-n":["5"]`, 0, 0},
		{"base64 value", call(`{"region":"é","n":5}`), `,"Mcp-Method":["tools/call"],"Mcp-Name":["lookup"],"Mcp-Param-Region":["=?base64?w6k=?="],"Mcp-Param-N":["5"]`, 0, 0},
		{"absent argument, no header", call(`{"n":5}`), `,"Mcp-Method":["tools/call"],"Mcp-Name":["lookup"],"Mcp-Param-N":["5"]`, 0, 0},
		{"no Mcp-Method", call(`{}`), `,"Mcp-Name":["lookup"]`, 1, 0},
		{"no Mcp-Name", call(`{}`), `,"Mcp-Method":["tools/call"]`, 1, 0},
		{"method differs", call(`{}`), `,"Mcp-Method":["tools/list"],"Mcp-Name":["lookup"]`, 0, 1},
		{"name differs", call(`{}`), `,"Mcp-Method":["tools/call"],"Mcp-Name":["other"]`, 0, 1},
		{"param missing", call(`{"region":"eu"}`), `,"Mcp-Method":["tools/call"],"Mcp-Name":["lookup"]`, 1, 0},
		{"param differs", call(`{"region":"eu","n":5}`), `,"Mcp-Method":["tools/call"],"Mcp-Name":["lookup"],"Mcp-Param-Region":["us"],"Mcp-Param-N":["6"]`, 0, 2},
		{"param for an absent argument", call(`{}`), `,"Mcp-Method":["tools/call"],"Mcp-Name":["lookup"],"Mcp-Param-Region":["eu"]`, 0, 1},
		{"older version: not required", strings.ReplaceAll(call(`{}`), "2026-07-28", "2025-11-25"), ``, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headers := tt.headers
			steps := listed
			if strings.Contains(tt.msg, "2025-11-25") {
				steps = nil
			}
			ex := exchange(2, tt.msg, headers)
			if strings.Contains(tt.msg, "2025-11-25") {
				ex[1] = onExchange(2, evt(2*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{"Mcp-Protocol-Version":["2025-11-25"]}}`))
			}
			rep := inspectSteps(t, append(append(steps, ex...), onExchange(2, s2c(3*ms, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)))...)
			if m, x := violationCount(rep, RuleMcpHeaderMissing), violationCount(rep, RuleMcpHeaderMismatch); m != tt.missing || x != tt.mismatch {
				t.Errorf("missing %d, mismatch %d; want %d, %d: %+v", m, x, tt.missing, tt.mismatch, rep.Violations)
			}
		})
	}
}
