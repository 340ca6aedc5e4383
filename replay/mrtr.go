package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// This file holds the rewriting of the identifiers a 2026-07-28 server
// chooses beyond request ids: the keys of MRTR inputRequests, which the
// retry must answer under, and subscription ids (the id of the
// subscriptions/listen request).

// inputKey is one entry of an MRTR inputRequests object: its key and the
// method of the request it stands for.
type inputKey struct {
	key, method string
}

// inputRequestsMarker and inputResponsesMarker are the quoted key names
// that make a frame worth decoding for MRTR keys.
var (
	inputRequestsMarker  = []byte(`"inputRequests"`)
	inputResponsesMarker = []byte(`"inputResponses"`)
)

// inputRequestKeys returns the entries of result.inputRequests of a
// response whose resultType is "input_required", in the order they appear
// in the frame. ok is false when the frame is no such response.
func inputRequestKeys(frame []byte) (keys []inputKey, ok bool) {
	if !bytes.Contains(frame, inputRequestsMarker) {
		return nil, false
	}
	var m struct {
		Result struct {
			ResultType    string          `json:"resultType"`
			InputRequests json.RawMessage `json:"inputRequests"`
		} `json:"result"`
	}
	if json.Unmarshal(frame, &m) != nil || m.Result.ResultType != "input_required" || len(m.Result.InputRequests) == 0 {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(m.Result.InputRequests))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, false
		}
		var v struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(raw, &v) // a value that is no request has no method
		keys = append(keys, inputKey{key: k, method: v.Method})
	}
	return keys, true
}

// mapInputKeys maps each recorded inputRequests key to its live
// counterpart: the same key when the live answer has it, else the next
// unused live key of the same method, in order of appearance. It returns
// the map (only entries whose key changes) and the recorded and live keys
// left without a counterpart.
func mapInputKeys(rec, live []inputKey) (m map[string]string, recLeft, liveLeft []string) {
	m = map[string]string{}
	liveByKey := map[string]bool{}
	for _, l := range live {
		liveByKey[l.key] = true
	}
	used := map[string]bool{}
	var pending []inputKey
	for _, r := range rec {
		if liveByKey[r.key] && !used[r.key] {
			used[r.key] = true
			continue
		}
		pending = append(pending, r)
	}
	for _, r := range pending {
		found := false
		for _, l := range live {
			if !used[l.key] && l.method == r.method {
				used[l.key] = true
				m[r.key] = l.key
				found = true
				break
			}
		}
		if !found {
			recLeft = append(recLeft, r.key)
		}
	}
	for _, l := range live {
		if !used[l.key] {
			liveLeft = append(liveLeft, l.key)
		}
	}
	return m, recLeft, liveLeft
}

// renameKeys returns frame with the keys of the object at path renamed by
// names (old -> new); keys not in names stay. The frame is decoded and
// encoded again (same values, keys in sorted order); it is returned
// unchanged, with changed false, when there is nothing to rename.
func renameKeys(frame []byte, path []string, names map[string]string) (out []byte, changed bool, err error) {
	if len(names) == 0 {
		return frame, false, nil
	}
	v, err := decodeJSON(frame)
	if err != nil {
		return frame, false, err
	}
	obj, ok := v.(map[string]any)
	for _, p := range path {
		if !ok {
			return frame, false, nil
		}
		obj, ok = obj[p].(map[string]any)
	}
	if !ok {
		return frame, false, nil
	}
	renamed := make(map[string]any, len(obj))
	for k, val := range obj {
		if n, ok := names[k]; ok {
			k, changed = n, true
		}
		renamed[k] = val
	}
	if !changed {
		return frame, false, nil
	}
	clear(obj)
	for k, val := range renamed {
		obj[k] = val
	}
	out, err = encodeJSON(v)
	if err != nil {
		return frame, false, err
	}
	return out, true, nil
}

// encodeJSON encodes v without HTML escaping and without the trailing
// newline of json.Encoder.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// invert returns the map from values to keys.
func invert(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}

// describeInputKeys words the keys left without a counterpart for a
// report, "" when there are none.
func describeInputKeys(recLeft, liveLeft []string) string {
	var parts []string
	if len(recLeft) > 0 {
		parts = append(parts, fmt.Sprintf("recorded inputRequests keys %q have no live counterpart (answered under their recorded keys)", recLeft))
	}
	if len(liveLeft) > 0 {
		parts = append(parts, fmt.Sprintf("live inputRequests keys %q have no recorded answer", liveLeft))
	}
	return strings.Join(parts, "; ")
}

// stringAt returns the string at the object path of a JSON frame ("" when
// absent or not a string).
func stringAt(frame []byte, path ...string) string {
	var v any
	if json.Unmarshal(frame, &v) != nil {
		return ""
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

// subscriptionMetaKey is the _meta key naming the subscription of a
// 2026-07-28 message: the id of its subscriptions/listen request.
const subscriptionMetaKey = "io.modelcontextprotocol/subscriptionId"

// subscriptionMarker is in every frame that may name a subscription, under
// params._meta[subscriptionMetaKey] or params.subscriptionId.
var subscriptionMarker = []byte(`subscriptionId"`)

// rewriteSubscription replaces, in a client frame, a recorded subscription
// id found at params._meta["io.modelcontextprotocol/subscriptionId"] or
// params.subscriptionId with the live id of the listen request (subs maps
// recorded id keys, as jsonrpc.ID.Key gives them, to live raw ids). The
// frame is returned unchanged when it names no known subscription.
func rewriteSubscription(frame []byte, subs map[string][]byte) ([]byte, error) {
	if len(subs) == 0 || !bytes.Contains(frame, subscriptionMarker) {
		return frame, nil
	}
	v, err := decodeJSON(frame)
	if err != nil {
		return frame, err
	}
	msg, _ := v.(map[string]any)
	params, _ := msg["params"].(map[string]any)
	if params == nil {
		return frame, nil
	}
	changed := false
	swap := func(obj map[string]any, key string) {
		if live, ok := subs[subscriptionKey(obj[key])]; ok {
			obj[key] = json.RawMessage(live)
			changed = true
		}
	}
	swap(params, "subscriptionId")
	if meta, ok := params["_meta"].(map[string]any); ok {
		swap(meta, subscriptionMetaKey)
	}
	if !changed {
		return frame, nil
	}
	return encodeJSON(v)
}

// subscriptionKey returns the id key (as jsonrpc.ID.Key gives it) of a
// decoded subscription id, "" when it is neither a string nor a number.
func subscriptionKey(v any) string {
	switch x := v.(type) {
	case string:
		return `"` + x + `"`
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return fmt.Sprint(i)
		}
		if f, err := x.Float64(); err == nil && f == float64(int64(f)) && f < 1<<53 && f > -(1<<53) {
			return fmt.Sprint(int64(f))
		}
		return x.String()
	}
	return ""
}
