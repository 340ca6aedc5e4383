package jsonrpc

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// requestFrame is a typical tools/call request of about 150 bytes.
func requestFrame() []byte {
	return []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello world"},"_meta":{"progressToken":17}}}`)
}

// responseFrame is a tools/list style response of about size bytes.
func responseFrame(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":3,"result":{"tools":[`)
	for i := 0; b.Len() < size-120; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%d","description":"Does thing %d with \"care\".","inputSchema":{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}}`, i, i)
	}
	b.WriteString(`],"resultType":"complete"}}`)
	return []byte(b.String())
}

// resultFrame is a tools/call result of about size bytes: one text block and
// one base64 image block, the shapes that make MCP frames large.
func resultFrame(size int) []byte {
	const unit = `Lorem ipsum dolor sit amet, \"consectetur\" adipiscing élit.\n `
	text := strings.Repeat(unit, size/2/len(unit)+1)
	raw := make([]byte, size*3/8)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	img := base64.StdEncoding.EncodeToString(raw)
	return []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"` + text +
		`"},{"type":"image","mimeType":"image/png","data":"` + img + `"}],"isError":false}}`)
}
