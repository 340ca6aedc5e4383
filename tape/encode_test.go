package tape

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendRecord(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{"message json", Record{Type: TypeMessage, Time: 1700000000000000001, Session: "s1", Dir: ClientToServer,
			Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
			`{"type":"message","time":1700000000000000001,"session":"s1","dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"ping"}}`},
		{"all message fields", Record{Type: TypeMessage, Time: 5, Session: "abc", Dir: ServerToClient, Exchange: 7,
			Stream: "post", EventID: "ev-1", NoEOL: true, Frame: []byte(`[1, 2]`)},
			`{"type":"message","time":5,"session":"abc","dir":"s2c","exchange":7,"stream":"post","event_id":"ev-1","noeol":true,"frame":[1, 2]}`},
		{"text: trailing space", Record{Type: TypeMessage, Frame: []byte("{} ")},
			`{"type":"message","text":"{} "}`},
		{"text: escapes", Record{Type: TypeMessage, Frame: []byte("a\"b\\c\nd\re\tf\x01\x1fé")},
			`{"type":"message","text":"a\"b\\c\nd\re\tf\u0001\u001fé"}`},
		{"text: empty frame", Record{Type: TypeMessage},
			`{"type":"message","text":""}`},
		{"b64: invalid utf-8", Record{Type: TypeMessage, Frame: []byte("\xff\xfe{}")},
			`{"type":"message","b64":"//57fQ=="}`},
		{"event", Record{Type: TypeEvent, Time: 9, Session: "s", Event: EventStderr, Data: json.RawMessage(`{"line":"boom"}`)},
			`{"type":"event","time":9,"session":"s","event":"stderr","data":{"line":"boom"}}`},
		{"event without data", Record{Type: TypeEvent, Event: EventOpen},
			`{"type":"event","event":"open"}`},
		{"event with indented data", Record{Type: TypeEvent, Event: EventExit, Data: json.RawMessage("{\n  \"code\": 1\n}\n")},
			`{"type":"event","event":"exit","data":{"code":1}}`},
		{"invalid utf-8 in metadata", Record{Type: TypeEvent, Session: "a\xffb", Event: EventClose},
			`{"type":"event","session":"a` + "\uFFFD" + `b","event":"close"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := checkRecord(&tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			got := string(appendRecord(nil, &tt.rec, classify(tt.rec.Frame), data))
			if got != tt.want+"\n" {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("line is not valid JSON: %s", got)
			}
		})
	}
}

func TestCheckRecordRefuses(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{"no type", Record{}, "unknown record type"},
		{"header", Record{Type: TypeHeader}, "header is written by"},
		{"event without name", Record{Type: TypeEvent}, "without an event name"},
		{"bad data", Record{Type: TypeEvent, Event: "x", Data: json.RawMessage(`{"a":`)}, "not valid JSON"},
		{"data not utf-8", Record{Type: TypeEvent, Event: "x", Data: json.RawMessage("{\"a\": \"\xff\"}")}, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkRecord(&tt.rec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestCheckRecordDataValid: data the caller vouches for is taken as it is,
// unchecked (so it must keep the promise: see Record.DataValid).
func TestCheckRecordDataValid(t *testing.T) {
	for _, data := range []string{`{"line":"ok"}`, `{"a":`} {
		rec := Record{Type: TypeEvent, Event: EventHTTP, Data: json.RawMessage(data), DataValid: true}
		got, err := checkRecord(&rec)
		if err != nil || string(got) != data {
			t.Fatalf("checkRecord(%s, DataValid) = %s, %v; want it as it is", data, got, err)
		}
	}
}
