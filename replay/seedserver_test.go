package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// seedEnv makes TestHelperSeedServer a small stdio MCP server with the
// protocol mistakes of the seeds' message shapes; its value names the
// scenario (see seedServer).
const seedEnv = "MCPTAPE_REPLAY_SEED"

// TestHelperSeedServer is not a test: with seedEnv set it is the seed
// server on stdio, the server of the seed scenarios (seeds_test.go).
func TestHelperSeedServer(t *testing.T) {
	scenario := os.Getenv(seedEnv)
	if scenario == "" {
		t.Skip("helper process for the replay tests")
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if line = bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(line)) > 0 {
			for _, o := range seedServer(scenario, line) {
				time.Sleep(o.delay)
				out.WriteString(o.line + "\n")
				out.Flush()
			}
		}
		if err != nil {
			os.Exit(0)
		}
	}
}

// seedOut is a line the seed server writes, after a pause.
type seedOut struct {
	delay time.Duration
	line  string
}

// seedMsg is a decoded client message: its keys as raw JSON.
type seedMsg map[string]json.RawMessage

// seedServer returns the seed server's answer to one client line in the
// given scenario. Every scenario answers initialize, tools/list and the
// like; the mistakes are:
//   - a line that is not valid JSON (or not UTF-8) is answered -32700 with
//     id null ("malformed-no-id": an error with no id at all, code 400);
//   - an object that is not a message is answered -32600 with id null;
//   - a request with id null, or an id that is not a string or an
//     integer, is answered -32600 (id null, or the id echoed);
//   - "answer-notification": notifications/initialized is answered with
//     id null, notifications/roots/list_changed with no id;
//   - resources/subscribe is followed by notifications/resources/updated,
//     50 ms after its answer; so is the notification task/cancel;
//   - tools/call "summarize" with a progress token sends a progress
//     notification that carries an id;
//   - tools/call "slow-..." answers after 50 ms; "twice" is answered
//     twice, "first" then "second" under the same id (once, "first", in
//     the scenario "answered-once");
//   - a batch is answered as a batch whose results say they came in a
//     batch ("via":"batch"); one holding id 20 is answered in reverse.
func seedServer(scenario string, line []byte) []seedOut {
	if !json.Valid(line) || !utf8.Valid(line) {
		if scenario == "malformed-no-id" {
			return []seedOut{{line: `{"jsonrpc":"2.0","error":{"code":400,"message":"Malformed JSON"}}`}}
		}
		return []seedOut{{line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`}}
	}
	if line[0] == '[' {
		var members []json.RawMessage
		if json.Unmarshal(line, &members) != nil || len(members) == 0 {
			return []seedOut{{line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`}}
		}
		var answers []string
		reverse := false
		for _, m := range members {
			var msg seedMsg
			if json.Unmarshal(m, &msg) != nil {
				answers = append(answers, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`)
				continue
			}
			reverse = reverse || string(msg["id"]) == "20"
			for _, o := range seedAnswer(scenario, msg, true) {
				if strings.Contains(o.line, `"method"`) {
					continue // no notifications inside a batch answer
				}
				answers = append(answers, o.line)
			}
		}
		if len(answers) == 0 {
			return nil
		}
		if reverse {
			for i, j := 0, len(answers)-1; i < j; i, j = i+1, j-1 {
				answers[i], answers[j] = answers[j], answers[i]
			}
		}
		return []seedOut{{line: "[" + strings.Join(answers, ",") + "]"}}
	}
	var msg seedMsg
	if json.Unmarshal(line, &msg) != nil {
		return []seedOut{{line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`}}
	}
	return seedAnswer(scenario, msg, false)
}

// seedAnswer answers one message; batched says it came in a batch.
func seedAnswer(scenario string, m seedMsg, batched bool) []seedOut {
	id, hasID := m["id"]
	_, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case !hasMethod && !hasID && !hasResult && !hasError:
		return []seedOut{{line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`}}
	case !hasMethod:
		return nil // the client's answer to a server request
	case hasID && string(id) == "null":
		return []seedOut{{line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"id must not be null"}}}`}}
	case hasID && !validSeedID(id):
		return []seedOut{{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"id must be a string or an integer"}}}`, id)}}
	}
	var method string
	json.Unmarshal(m["method"], &method)
	var params struct {
		Name            string `json:"name"`
		ProtocolVersion string `json:"protocolVersion"`
		Meta            struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(m["params"], &params)
	via := `"single"`
	if batched {
		via = `"batch"`
	}
	result := func(r string) seedOut {
		return seedOut{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, r)}
	}
	if !hasID { // notifications
		switch {
		case scenario == "answer-notification" && method == "notifications/initialized":
			return []seedOut{{line: `{"jsonrpc":"2.0","id":null,"result":{}}`}}
		case scenario == "answer-notification" && method == "notifications/roots/list_changed":
			return []seedOut{{line: `{"jsonrpc":"2.0","result":{}}`}}
		case method == "task/cancel":
			return []seedOut{{line: `{"jsonrpc":"2.0","method":"resources/updated","params":{"uri":"file://reports/sales-q1.txt"}}`}}
		}
		return nil
	}
	switch method {
	case "initialize":
		v := params.ProtocolVersion
		if v == "" {
			v = "2025-06-18"
		}
		return []seedOut{result(`{"protocolVersion":"` + v + `","capabilities":{"tools":{},"resources":{"subscribe":true}},"serverInfo":{"name":"seed-server","version":"1.0.0"}}`)}
	case "tools/list":
		return []seedOut{result(`{"tools":[{"name":"summarize"}],"via":` + via + `}`)}
	case "resources/list":
		return []seedOut{result(`{"resources":[],"via":` + via + `}`)}
	case "prompts/list":
		return []seedOut{result(`{"prompts":[],"via":` + via + `}`)}
	case "resources/subscribe":
		return []seedOut{result(`{}`), {delay: 50 * time.Millisecond,
			line: `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"conversation://conv_123"}}`}}
	case "tools/call":
		switch {
		case strings.HasPrefix(params.Name, "slow-"):
			return []seedOut{{delay: 50 * time.Millisecond, line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done %s"}]}}`, id, params.Name)}}
		case params.Name == "summarize" && params.Meta.ProgressToken != nil:
			return []seedOut{
				{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":77,"method":"notifications/progress","params":{"progressToken":%s,"progress":75,"total":100}}`, params.Meta.ProgressToken)},
				result(`{"content":[{"type":"text","text":"ok"}]}`),
			}
		case params.Name == "twice": // one request, two answers
			first := result(`{"content":[{"type":"text","text":"first"}]}`)
			if scenario == "answered-once" {
				return []seedOut{first}
			}
			return []seedOut{first, result(`{"content":[{"type":"text","text":"second"}]}`)}
		case params.Name == "greet":
			return []seedOut{result(`{"content":[{"type":"text","text":"Grüße, 世界 👋 — naïve café"}]}`)}
		}
		return []seedOut{{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Invalid params"}}`, id)}}
	}
	return []seedOut{{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)}}
}

// validSeedID reports whether a raw id is a string or an integer.
func validSeedID(id json.RawMessage) bool {
	if len(id) > 0 && id[0] == '"' {
		return true
	}
	var n json.Number
	if json.Unmarshal(id, &n) != nil {
		return false
	}
	_, err := n.Int64()
	return err == nil
}
