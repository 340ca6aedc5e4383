//lint:file-ignore SA1019 the ask tool exercises sampling, deprecated from 2026-07-28 (SEP-2577) but live on every version the SDK serves.

package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CodeRequestedFailure is the JSON-RPC error code of the error response the
// fail tool sends in mode "rpc". It lies in the range JSON-RPC leaves to
// implementations and is used by neither SDK, so a tape shows at once that
// the error was asked for.
const CodeRequestedFailure = -32010

// MaxBlobBytes is the largest result the blob tool produces (64 MiB).
const MaxBlobBytes = 64 << 20

// MaxSleepMS is the longest the sleep tool sleeps (one hour).
const MaxSleepMS = 3_600_000

// MaxSleepSteps is the largest number of steps (and progress
// notifications) of one sleep call.
const MaxSleepSteps = 10_000

// alphabet is the pattern of the blob tool's text.
const alphabet = "abcdefghijklmnopqrstuvwxyz"

// askKey is the key of the ask tool's input request and response.
const askKey = "ask"

// Tool arguments and structured results. The JSON names are the wire names
// of the arguments; the input schemas are generated from these structs.
type (
	echoArgs struct {
		Message string `json:"message" jsonschema:"the text to echo back"`
	}
	echoResult struct {
		Message string `json:"message"`
	}
	addArgs struct {
		A float64 `json:"a" jsonschema:"first addend"`
		B float64 `json:"b" jsonschema:"second addend"`
	}
	addResult struct {
		Sum float64 `json:"sum"`
	}
	sleepArgs struct {
		MS    int `json:"ms" jsonschema:"total time to sleep, in milliseconds"`
		Steps int `json:"steps,omitempty" jsonschema:"number of steps; one progress notification after each when the call has a progressToken"`
	}
	failArgs struct {
		Mode string `json:"mode" jsonschema:"tool: a tool error result; rpc: a JSON-RPC error response"`
	}
	blobArgs struct {
		Bytes int `json:"bytes" jsonschema:"exact size of the text result, in bytes"`
	}
	askArgs struct {
		Kind string `json:"kind" jsonschema:"elicitation or sampling: which request to send to the client"`
	}
)

// tools holds what the tool handlers need; one per server.
type tools struct {
	echoPrefix string
	log        *slog.Logger
}

// register adds every tool to s.
func (t *tools) register(s *mcp.Server) error {
	return errors.Join(
		addTool(s, "echo", "Echo the message back (after the server's echo prefix, if any).", nil, t.echo),
		addTool(s, "add", "Add two numbers.", nil, add),
		addTool(s, "sleep", "Sleep ms milliseconds (at most one hour) in steps steps (default 1, at most 10000), "+
			"sending progress after each step when the call has a progressToken; stops when cancelled.",
			func(p map[string]*jsonschema.Schema) { p["steps"].Default = json.RawMessage("1") }, t.sleep),
		addTool(s, "fail", "Fail on purpose: mode tool gives a tool error result, mode rpc a JSON-RPC error "+
			"(code "+strconv.Itoa(CodeRequestedFailure)+").",
			func(p map[string]*jsonschema.Schema) { p["mode"].Enum = []any{"tool", "rpc"} }, fail),
		addTool(s, "blob", "Answer a text of exactly bytes bytes (the alphabet repeated), at most 64 MiB.",
			nil, blob),
		addTool(s, "ask", "Ask the client: elicitation/create (answers the action and content) or "+
			"sampling/createMessage (answers the sampled text). Needs the client capability.",
			func(p map[string]*jsonschema.Schema) { p["kind"].Enum = []any{"elicitation", "sampling"} }, ask),
	)
}

// addTool adds a typed tool whose input schema is generated from In and
// then adjusted by tweak (given the schema's properties), if not nil.
func addTool[In, Out any](s *mcp.Server, name, desc string, tweak func(map[string]*jsonschema.Schema), h mcp.ToolHandlerFor[In, Out]) error {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	if tweak != nil {
		tweak(schema.Properties)
	}
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc, InputSchema: schema}, h)
	return nil
}

// textResult is a result holding one text content.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func (t *tools) echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, echoResult, error) {
	msg := t.echoPrefix + in.Message
	return textResult(msg), echoResult{Message: msg}, nil
}

func add(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, addResult, error) {
	sum := in.A + in.B
	if math.IsInf(sum, 0) {
		return nil, addResult{}, fmt.Errorf("add: %g + %g overflows", in.A, in.B)
	}
	return textResult(strconv.FormatFloat(sum, 'g', -1, 64)), addResult{Sum: sum}, nil
}

// sleep sleeps in.MS milliseconds in in.Steps equal steps, scheduled from
// the start so that the total does not drift, and reports progress after
// each step when the call carries a progress token.
func (t *tools) sleep(ctx context.Context, req *mcp.CallToolRequest, in sleepArgs) (*mcp.CallToolResult, any, error) {
	if in.MS < 0 || in.MS > MaxSleepMS {
		return nil, nil, fmt.Errorf("sleep: ms %d out of range 0..%d", in.MS, MaxSleepMS)
	}
	if in.Steps < 0 || in.Steps > MaxSleepSteps {
		return nil, nil, fmt.Errorf("sleep: steps %d out of range 0..%d (0 means 1)", in.Steps, MaxSleepSteps)
	}
	steps := max(in.Steps, 1)
	total := time.Duration(in.MS) * time.Millisecond
	token := req.Params.GetProgressToken()
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := 1; i <= steps; i++ {
		timer.Reset(time.Until(start.Add(total * time.Duration(i) / time.Duration(steps))))
		select {
		case <-ctx.Done():
			t.log.InfoContext(ctx, "sleep stopped", "ms", in.MS, "step", i-1, "steps", steps, "err", ctx.Err())
			return nil, nil, ctx.Err()
		case <-timer.C:
		}
		if token == nil {
			continue
		}
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(steps),
			Message:       fmt.Sprintf("step %d/%d", i, steps),
		})
		if err != nil {
			// Progress is advisory: a client that cannot take it (a closed
			// stream, JSON answers) still gets the result.
			t.log.DebugContext(ctx, "sleep: progress not sent", "step", i, "err", err)
		}
	}
	return textResult(fmt.Sprintf("slept %d ms", in.MS)), nil, nil
}

func fail(_ context.Context, _ *mcp.CallToolRequest, in failArgs) (*mcp.CallToolResult, any, error) {
	switch in.Mode {
	case "tool":
		return nil, nil, errors.New("requested failure")
	case "rpc":
		return nil, nil, &jsonrpc.Error{Code: CodeRequestedFailure, Message: "requested failure"}
	}
	return nil, nil, fmt.Errorf("fail: unknown mode %q (want tool or rpc)", in.Mode)
}

func blob(_ context.Context, _ *mcp.CallToolRequest, in blobArgs) (*mcp.CallToolResult, any, error) {
	if in.Bytes < 0 || in.Bytes > MaxBlobBytes {
		return nil, nil, fmt.Errorf("blob: bytes %d out of range 0..%d", in.Bytes, MaxBlobBytes)
	}
	return textResult(blobText(in.Bytes)), nil, nil
}

// blobText returns n bytes of the alphabet repeated.
func blobText(n int) string {
	return strings.Repeat(alphabet, n/len(alphabet)+1)[:n]
}

// ask answers its first call with an input request for the client (see the
// package doc); the SDK delivers it and calls ask again with the answer in
// InputResponses.
func ask(_ context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses[askKey]; ok {
		text, err := askAnswer(in.Kind, resp)
		if err != nil {
			return nil, nil, err
		}
		return textResult(text), nil, nil
	}
	caps := req.ClientCapabilities()
	var ir mcp.InputRequest
	switch in.Kind {
	case "elicitation":
		if caps == nil || caps.Elicitation == nil {
			return nil, nil, errors.New("ask: the client did not declare the elicitation capability")
		}
		if caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
			return nil, nil, errors.New("ask: the client declared only URL elicitation, not form")
		}
		ir = &mcp.ElicitParams{
			Message: "mcptape refserver asks: what is your name?",
			RequestedSchema: &jsonschema.Schema{
				Type:       "object",
				Properties: map[string]*jsonschema.Schema{"name": {Type: "string", Description: "your name"}},
				Required:   []string{"name"},
			},
		}
	case "sampling":
		if caps == nil || caps.Sampling == nil {
			return nil, nil, errors.New("ask: the client did not declare the sampling capability")
		}
		ir = &mcp.CreateMessageParams{
			Messages: []*mcp.SamplingMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "mcptape refserver asks: say something."}},
			},
			MaxTokens: 100,
		}
	default:
		return nil, nil, fmt.Errorf("ask: unknown kind %q (want elicitation or sampling)", in.Kind)
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{askKey: ir}}, nil, nil
}

// askAnswer renders the client's answer to an ask of kind: the JSON of an
// elicitation's action and content, or a sampling's text.
func askAnswer(kind string, resp mcp.InputResponse) (string, error) {
	switch r := resp.(type) {
	case *mcp.ElicitResult:
		if kind == "elicitation" && r != nil {
			b, err := json.Marshal(struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content,omitempty"`
			}{r.Action, r.Content})
			if err != nil {
				return "", fmt.Errorf("ask: encoding the elicitation answer: %w", err)
			}
			return string(b), nil
		}
	case *mcp.CreateMessageWithToolsResult:
		if kind == "sampling" && r != nil {
			if len(r.Content) == 0 {
				return "", errors.New("ask: the sampling answer has no content")
			}
			return contentText(r.Content[0]), nil
		}
	case *mcp.CreateMessageResult:
		if kind == "sampling" && r != nil {
			return contentText(r.Content), nil
		}
	}
	return "", fmt.Errorf("ask: unexpected answer %T to an ask of kind %q", resp, kind)
}

// contentText is the text of c, or a placeholder naming its type.
func contentText(c mcp.Content) string {
	if tc, ok := c.(*mcp.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("(non-text content %T)", c)
}
