package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ChatTool is the name of the streamed tool [WithChat] adds.
const ChatTool = "chat"

// MaxChatChunks bounds [Chat.Chunks].
const MaxChatChunks = 1_000_000

// Chat configures the streamed chat tool, the peer for the streaming
// dialect of the LangGraph MCP server's documentation ("Streaming
// Messages"): one tools/call answered by several results under the same id,
// {"type":"content_start"}, Chunks times {"type":"content_delta","delta":…}
// and a final {"type":"content_end","conversation_id":…,"usage":{…}}.
//
// The official SDK sends exactly one answer per request, so these frames
// are written at the transport level, beside the SDK: on stdio the pump
// takes a chat call out of the client's stream before it reaches the SDK
// and writes the chunks to the shared output (see [ServeStdioChat]); over
// HTTP a wrapper handler answers a POST holding one chat call with an SSE
// stream of the chunks (see [HTTPConfig.Chat]). The SDK still lists the
// tool (tools/list), and answers it with one plain result (the joined
// deltas) where it is reached anyway: inside a batch, or in a transport
// that does not stream it.
//
// A client's notifications/cancelled naming a chat call whose stream
// runs (in the same session) stops it: no further part, no end result,
// as a cancelled request gets no answer (see chatRuns).
type Chat struct {
	// Chunks is the number of content_delta results; 0 disables streaming.
	Chunks int
	// Delay is the pause before each delta and before the end result.
	Delay time.Duration
}

// enabled tells whether chat calls are streamed.
func (c Chat) enabled() bool { return c.Chunks > 0 }

func (c Chat) check() error {
	if c.Chunks < 0 || c.Chunks > MaxChatChunks {
		return fmt.Errorf("chat: chunks %d out of range 0..%d", c.Chunks, MaxChatChunks)
	}
	if c.Delay < 0 {
		return fmt.Errorf("chat: chunk delay %v must not be negative", c.Delay)
	}
	return nil
}

// WithChat adds the chat tool {query} to the server's tools. Its streamed
// form needs the same Chat given to [ServeStdioChat] or [HTTPConfig.Chat].
func WithChat(c Chat) Option {
	return func(o *options) error {
		if err := c.check(); err != nil {
			return err
		}
		if !c.enabled() {
			return fmt.Errorf("chat: chunks must be at least 1")
		}
		o.chat = c
		return nil
	}
}

type chatArgs struct {
	Query string `json:"query" jsonschema:"the user's message"`
}

// chatUsage is the usage member of the end result.
type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ChatAnswer is the whole answer to query, which the deltas split: it
// does not depend on their number, so that answers streamed in different
// chunks join to the same text.
func ChatAnswer(query string) string {
	return fmt.Sprintf("You asked %q. This is the reference server's streamed answer.", query)
}

// ChatDeltas splits the answer to query into n deltas of nearly equal
// numbers of characters (some empty when n exceeds them).
func ChatDeltas(query string, n int) []string {
	r := []rune(ChatAnswer(query))
	out := make([]string, n)
	for i := range n {
		out[i] = string(r[i*len(r)/n : (i+1)*len(r)/n])
	}
	return out
}

// chatUsageFor counts words: of the query as prompt tokens, of the
// answer as completion tokens.
func chatUsageFor(query string) chatUsage {
	p, c := len(strings.Fields(query)), len(strings.Fields(ChatAnswer(query)))
	return chatUsage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

// chatConversation is the end part's conversation_id: derived from the
// query, so that replays compare equal whatever the request ids.
func chatConversation(query string) string {
	h := fnv.New32a()
	h.Write([]byte(query))
	return fmt.Sprintf("conv_%08x", h.Sum32())
}

// plain is the SDK handler: the whole answer as one result.
func (c Chat) plain(_ context.Context, _ *mcp.CallToolRequest, in chatArgs) (*mcp.CallToolResult, any, error) {
	return textResult(ChatAnswer(in.Query)), nil, nil
}

// chatCall is a client frame read far enough to tell a chat call.
type chatCall struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string   `json:"name"`
		Arguments chatArgs `json:"arguments"`
	} `json:"params"`
}

// parseChatCall reports the id and query of frame when it is one
// tools/call of the chat tool with a string or number id. Frames that do
// not mention the tool's name are passed over without decoding.
func parseChatCall(frame []byte) (id json.RawMessage, query string, ok bool) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 || frame[0] != '{' || !bytes.Contains(frame, []byte(`"`+ChatTool+`"`)) {
		return nil, "", false
	}
	var m chatCall
	if unmarshalTolerant(frame, &m) != nil || m.Method != "tools/call" || m.Params.Name != ChatTool {
		return nil, "", false
	}
	if _, ok := idKey(m.ID); !ok {
		return nil, "", false
	}
	return m.ID, m.Params.Arguments.Query, true
}

// stream writes the answer to the call id as len(deltas)+2 frames (each
// one JSON object, no newline), calling emit for each; last is true for
// the end result. It stops early with ctx's error or emit's.
func (c Chat) stream(ctx context.Context, id json.RawMessage, query string, emit func(frame []byte, last bool) error) error {
	frame := func(result any) []byte {
		b, _ := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
		}{"2.0", id, result}) // cannot fail: plain structs and a valid id
		return b
	}
	if err := emit(frame(map[string]string{"type": "content_start"}), false); err != nil {
		return err
	}
	t := time.NewTimer(0)
	defer t.Stop()
	wait := func() error {
		if c.Delay <= 0 {
			return ctx.Err()
		}
		t.Reset(c.Delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return ctx.Err() // a cancel that came with the timer wins
		}
	}
	<-t.C
	for _, text := range ChatDeltas(query, c.Chunks) {
		if err := wait(); err != nil {
			return err
		}
		delta := struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
		}{"content_delta", text}
		if err := emit(frame(delta), false); err != nil {
			return err
		}
	}
	if err := wait(); err != nil {
		return err
	}
	end := struct {
		Type           string    `json:"type"`
		ConversationID string    `json:"conversation_id"`
		Usage          chatUsage `json:"usage"`
	}{"content_end", chatConversation(query), chatUsageFor(query)}
	return emit(frame(end), true)
}
