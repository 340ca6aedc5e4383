package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/jsonrpc"
)

// summaryWidth bounds a one-line summary, in runes.
const summaryWidth = 100

// Summary returns a one-line summary of a message for a timeline: for a
// response, what the result says (tool output, list sizes, server info,
// input required, task status) or the error's code and message; for a
// request or notification, its main parameters. method is the message's
// method, or for a response the method of its request ("" if unknown).
// Malformed content gives a shorter summary, never an error.
func Summary(frame []byte, info jsonrpc.Info, method string) string {
	var s string
	switch info.Kind {
	case jsonrpc.KindError:
		msg, _ := lookupString(frame, "error", "message")
		s = fmt.Sprintf("%d %s", info.ErrorCode, msg)
	case jsonrpc.KindResponse:
		s = resultSummary(lookup(frame, "result"), method)
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		s = paramsSummary(lookup(frame, "params"), method)
	case jsonrpc.KindBatch:
		s = english.Count(int64(info.BatchLen), "message")
	default:
		s = "invalid: " + strings.Join(info.Violations.Names(), ", ")
	}
	return clip(s, summaryWidth)
}

// resultView holds the result fields the summaries use. Large values
// (image data, structured content) are not decoded.
type resultView struct {
	ResultType string `json:"resultType"`
	IsError    bool   `json:"isError"`
	Content    []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MimeType string `json:"mimeType"`
		Resource *struct {
			URI string `json:"uri"`
		} `json:"resource"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Tools             []named         `json:"tools"`
	Prompts           []named         `json:"prompts"`
	Resources         []named         `json:"resources"`
	ResourceTemplates []named         `json:"resourceTemplates"`
	Contents          []struct {
		URI string `json:"uri"`
	} `json:"contents"`
	Messages          []json.RawMessage          `json:"messages"`
	ProtocolVersion   string                     `json:"protocolVersion"`
	SupportedVersions []string                   `json:"supportedVersions"`
	InputRequests     map[string]json.RawMessage `json:"inputRequests"`
	Task              *taskView                  `json:"task"`
	taskView
	Completion *struct {
		Values []string `json:"values"`
	} `json:"completion"`
	Roots  []struct{ URI string } `json:"roots"`
	Action string                 `json:"action"`
	Model  string                 `json:"model"`
}

type named struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
}

type taskView struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

func resultSummary(raw []byte, method string) string {
	if len(raw) == 0 {
		return "(no result)"
	}
	if raw[0] != '{' {
		return compact(raw)
	}
	var v resultView
	if err := json.Unmarshal(raw, &v); err != nil {
		return compact(raw)
	}
	switch {
	case v.ResultType == resultInputRequired:
		keys := make([]string, 0, len(v.InputRequests))
		for k := range v.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "input required: " + strings.Join(keys, ", ")
	case v.Task != nil:
		return "task " + v.Task.TaskID + " " + v.Task.Status
	}
	switch method {
	case mInitialize, mDiscover:
		var parts []string
		if p := serverPeer(raw); p != nil {
			parts = append(parts, peerText(p))
		}
		if v.ProtocolVersion != "" {
			parts = append(parts, "protocol "+v.ProtocolVersion)
		}
		if len(v.SupportedVersions) > 0 {
			parts = append(parts, "versions "+strings.Join(v.SupportedVersions, " "))
		}
		return strings.Join(parts, " · ")
	case "tools/list":
		return listSummary(v.Tools, "tool")
	case "prompts/list":
		return listSummary(v.Prompts, "prompt")
	case "resources/list":
		return listSummary(v.Resources, "resource")
	case "resources/templates/list":
		return listSummary(v.ResourceTemplates, "template")
	case mResRead:
		uris := make([]string, 0, len(v.Contents))
		for _, c := range v.Contents {
			uris = append(uris, c.URI)
		}
		return english.Count(int64(len(v.Contents)), "content") + ": " + strings.Join(uris, ", ")
	case mPromptsGet:
		return english.Count(int64(len(v.Messages)), "message")
	case "completion/complete":
		if v.Completion != nil {
			return "values: " + strings.Join(v.Completion.Values, ", ")
		}
	case "roots/list":
		uris := make([]string, 0, len(v.Roots))
		for _, r := range v.Roots {
			uris = append(uris, r.URI)
		}
		return english.Count(int64(len(v.Roots)), "root") + ": " + strings.Join(uris, ", ")
	case "elicitation/create":
		return "action " + v.Action
	case mTasksGet, mTasksCancel:
		return "task " + v.TaskID + " " + v.Status
	}
	if v.Content != nil || v.IsError {
		return contentSummary(&v)
	}
	if string(bytes.TrimSpace(raw)) == "{}" {
		return "{}"
	}
	return compact(raw)
}

// contentSummary summarises a tool or sampling result's content.
func contentSummary(v *resultView) string {
	var parts []string
	for _, c := range v.Content {
		switch c.Type {
		case "text":
			parts = append(parts, strconv.Quote(clip(c.Text, 60)))
		case "resource":
			if c.Resource != nil {
				parts = append(parts, "resource "+c.Resource.URI)
				continue
			}
			parts = append(parts, c.Type)
		default:
			parts = append(parts, strings.TrimSpace(c.Type+" "+c.MimeType))
		}
	}
	if len(v.Content) == 0 && v.StructuredContent != nil {
		parts = append(parts, compact(v.StructuredContent))
	}
	s := strings.Join(parts, ", ")
	if v.IsError {
		return "isError: " + s
	}
	if v.Model != "" {
		s = v.Model + ": " + s
	}
	return s
}

func listSummary(items []named, what string) string {
	names := make([]string, 0, len(items))
	for _, it := range items {
		names = append(names, or(it.Name, it.URI))
	}
	return english.Count(int64(len(items)), what) + ": " + strings.Join(names, ", ")
}

// paramsSummary summarises the parameters of requests and notifications
// worth a glance.
func paramsSummary(raw []byte, method string) string {
	if len(raw) == 0 {
		return ""
	}
	str := func(path ...string) string { s, _ := lookupString(raw, path...); return s }
	switch method {
	case mToolsCall:
		s := str("name")
		if args := lookup(raw, "arguments"); args != nil {
			s += " " + compact(args)
		}
		return s
	case mPromptsGet:
		return str("name")
	case mResRead, "resources/subscribe", "resources/unsubscribe", "notifications/resources/updated":
		return str("uri")
	case mInitialize:
		s := ""
		if p := peerAt(raw, "clientInfo"); p != nil {
			s = peerText(p) + " · "
		}
		return s + "protocol " + str("protocolVersion")
	case jsonrpc.MethodProgress:
		s := compact(lookup(raw, "progress"))
		if total := lookup(raw, "total"); total != nil {
			s += "/" + compact(total)
		}
		if m := str("message"); m != "" {
			s += " " + m
		}
		return s
	case jsonrpc.MethodCancelled:
		s := "id " + compact(lookup(raw, "requestId"))
		if r := str("reason"); r != "" {
			s += ": " + r
		}
		return s
	case "notifications/message":
		return strings.TrimSpace(str("level") + " " + str("logger") + " " + compact(lookup(raw, "data")))
	case "elicitation/create":
		return str("message")
	case mTasksGet, mTasksResult, mTasksCancel:
		return "task " + str("taskId")
	case "logging/setLevel":
		return str("level")
	}
	return ""
}

// compact returns raw JSON on one line without insignificant spaces.
func compact(raw []byte) string {
	if raw == nil {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return clip(string(raw), summaryWidth)
	}
	return clip(b.String(), summaryWidth)
}
