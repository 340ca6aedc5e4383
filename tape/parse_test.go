package tape

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseRecord(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Record
	}{
		{"writer order", `{"type":"message","time":12,"session":"s","dir":"c2s","exchange":3,"stream":"get","event_id":"e","noeol":true,"frame":{"a":[1,"}"]}}`,
			Record{Type: TypeMessage, Time: 12, Session: "s", Dir: ClientToServer, Exchange: 3, Stream: "get", EventID: "e", NoEOL: true, Frame: []byte(`{"a":[1,"}"]}`)}},
		{"any order, spaces, unknown keys", `{ "frame" : [1, {"x":"\"]"}] , "future":{"k":[1,2]}, "dir":"s2c", "type":"message", "time":7 }`,
			Record{Type: TypeMessage, Time: 7, Dir: ServerToClient, Frame: []byte(`[1, {"x":"\"]"}]`)}},
		{"frame scalar", `{"type":"message","frame":-1.5e3}`, Record{Type: TypeMessage, Frame: []byte(`-1.5e3`)}},
		{"frame string with escaped backslash", `{"type":"message","frame":"a\\"}`, Record{Type: TypeMessage, Frame: []byte(`"a\\"`)}},
		{"text escapes", `{"type":"message","text":"a\nb\u00e9\ud83d\ude00\/\"\\\t\b\f\r"}`,
			Record{Type: TypeMessage, Frame: []byte("a\nbé😀/\"\\\t\b\f\r")}},
		{"lone surrogate", `{"type":"message","text":"\ud800x"}`, Record{Type: TypeMessage, Frame: []byte("\uFFFDx")}},
		{"empty text", `{"type":"message","text":""}`, Record{Type: TypeMessage, Frame: []byte{}}},
		{"b64", `{"type":"message","b64":"//57fQ=="}`, Record{Type: TypeMessage, Frame: []byte("\xff\xfe{}")}},
		{"b64 unpadded", `{"type":"message","b64":"//57fQ"}`, Record{Type: TypeMessage, Frame: []byte("\xff\xfe{}")}},
		{"nulls", `{"type":"event","time":null,"session":null,"event":"open","data":null}`, Record{Type: TypeEvent, Event: EventOpen, Data: []byte("null")}},
		{"null frame", `{"type":"message","dir":null,"frame":null}`, Record{Type: TypeMessage, Frame: []byte("null")}},
		{"time as float (jq)", `{"type":"event","time":1.7e+18,"event":"x"}`, Record{Type: TypeEvent, Time: 1_700_000_000_000_000_000, Event: "x"}},
		{"negative time", `{"type":"event","time":-5,"event":"x"}`, Record{Type: TypeEvent, Time: -5, Event: "x"}},
		{"max time", `{"type":"event","time":9223372036854775807,"event":"x"}`, Record{Type: TypeEvent, Time: 9223372036854775807, Event: "x"}},
		{"escaped key", `{"typ\u0065":"event","event":"x"}`, Record{Type: TypeEvent, Event: "x"}},
		{"event data", `{"type":"event","event":"exit","data":{"code":1,"signal":""}}`, Record{Type: TypeEvent, Event: EventExit, Data: []byte(`{"code":1,"signal":""}`)}},
		{"unknown type kept", `{"type":"bookmark","time":1}`, Record{Type: "bookmark", Time: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p lineParser
			got, err := p.parse([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			if d := diffRecord(&tt.want, got); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func TestParseRecordErrors(t *testing.T) {
	tests := []struct{ line, want string }{
		{`[1]`, "not a JSON object"},
		{`{}`, "without a type"},
		{`{"time":1}`, "without a type"},
		{`{"type":"message"}`, "without frame"},
		{`{"type":"message","frame":1,"text":"1"}`, "more than one"},
		{`{"type":"message","frame":}`, "missing value"},
		{`{"type":"message","frame":{"a":1}`, "unterminated"},
		{`{"type":"message","text":"abc}`, "unterminated string"},
		{`{"type":"message","text":"\q"}`, "bad escape"},
		{`{"type":"message","text":"\u12"}`, "bad \\u escape"},
		{`{"type":"message","b64":"@@@@"}`, "base64"},
		{`{"type":"event","time":"soon"}`, "not an integer"},
		{`{"type":"event","time":1.5}`, "not an integer"},
		{`{"type":"event","time":99999999999999999999}`, "not an integer"},
		{`{"type":"event","exchange":-1}`, "negative"},
		{`{"type":"event","noeol":1}`, "not a boolean"},
		{`{"type":1}`, "not a string"},
		{`{"type":"event"} x`, "data after the record"},
		{`{"type":"event" "a":1}`, "expected ',' or '}'"},
		{`{"type" 1}`, "expected ':'"},
		{`{type:1}`, "expected a key"},
		{`{"type":"header","format":"one"}`, "header"},
	}
	for _, tt := range tests {
		var p lineParser
		_, err := p.parse([]byte(tt.line))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse(%s): err = %v, want it to say %q", tt.line, err, tt.want)
		}
	}
}

func TestParseInternsButOwns(t *testing.T) {
	var p lineParser
	line := []byte(`{"type":"message","session":"sess","frame":{"a":1}}`)
	a, err := p.parse(line)
	if err != nil {
		t.Fatal(err)
	}
	copy(line, bytes.Repeat([]byte("x"), len(line))) // the reader reuses its buffer
	if a.Session != "sess" || string(a.Frame) != `{"a":1}` {
		t.Fatalf("record aliases the line: %+v", a)
	}
}

// FuzzParseLine: no line makes the parser panic, and a record it accepts
// survives a write and a second parse unchanged.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","time":12,"session":"s","dir":"c2s","exchange":3,"stream":"get","event_id":"e","noeol":true,"frame":{"a":[1,"}"]}}`,
		`{"type":"message","text":"a\nb\u00e9\ud83d\ude00"}`,
		`{"type":"message","b64":"//57fQ=="}`,
		`{"type":"event","time":1.7e+18,"event":"x","data":{"line":"y"}}`,
		`{"type":"header","format":1,"tool":"mcptape","time":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var p lineParser
		r, err := p.parse(line)
		if err != nil || (r.Type != TypeMessage && r.Type != TypeEvent) {
			return
		}
		if r.Type == TypeEvent && r.Event == "" {
			return
		}
		data, err := checkRecord(r)
		if err != nil {
			return // e.g. "data" that skipValue cut out but is not valid JSON
		}
		r.Data = data
		again := appendRecord(nil, r, classify(r.Frame), data)
		r2, err := p.parse(again[:len(again)-1])
		if err != nil {
			t.Fatalf("re-parse of %s: %v", again, err)
		}
		// Metadata strings with invalid UTF-8 are replaced on writing.
		if strings.ToValidUTF8(r.Session, "") != r.Session || strings.ToValidUTF8(r.Stream, "") != r.Stream ||
			strings.ToValidUTF8(r.EventID, "") != r.EventID || strings.ToValidUTF8(r.Event, "") != r.Event ||
			strings.ToValidUTF8(string(r.Type), "") != string(r.Type) || strings.ToValidUTF8(string(r.Dir), "") != string(r.Dir) {
			return
		}
		if d := diffRecord(r, r2); d != "" {
			t.Fatalf("line %s\nrewritten %s\n%s", line, again, d)
		}
	})
}
