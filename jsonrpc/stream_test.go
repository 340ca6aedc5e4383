package jsonrpc

import "testing"

func TestStreamDialectPart(t *testing.T) {
	d := LangGraphStream()
	tests := []struct {
		frame string
		want  StreamPart
		delta string
		may   bool
	}{
		{`{"jsonrpc":"2.0","id":8,"result":{"type":"content_start"}}`, PartStart, "", true},
		{`{"jsonrpc":"2.0","id":8,"result":{"type":"content_delta","delta":"Quantum computing"}}`, PartDelta, "Quantum computing", true},
		{`{"jsonrpc":"2.0","id":8,"result":{"delta":"a\u00e9\n","type":"content_delta"}}`, PartDelta, "a\u00e9\n", true},
		{`{"jsonrpc":"2.0","id":8,"result":{"\u0074ype":"content_\u0064elta","delta":"x"}}`, PartDelta, "x", false},
		{`{"jsonrpc":"2.0","id":8,"result":{"type":"content_end","conversation_id":"c","usage":{"prompt_tokens":20,"completion_tokens":150,"total_tokens":170}}}`, PartEnd, "", true},
		// not parts: ordinary results, even with a "type" member or the
		// names elsewhere
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"content_delta"}]}}`, PartSingle, "", true},
		{`{"jsonrpc":"2.0","id":1,"result":{"type":"text"}}`, PartSingle, "", false},
		{`{"jsonrpc":"2.0","id":1,"result":{"type":7}}`, PartSingle, "", false},
		{`{"jsonrpc":"2.0","id":1,"result":"content_start"}`, PartSingle, "", true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"content_end"}}`, PartSingle, "", true},
		{`{"jsonrpc":"2.0","method":"x","params":{"type":"content_start"}}`, PartSingle, "", true},
		{`{"jsonrpc":"2.0","id":1,"result":{"type":"content_startx"}}`, PartSingle, "", false},
	}
	var members []Member
	for _, tt := range tests {
		var info Info
		members = ClassifyMembers([]byte(tt.frame), &info, members)
		var res []Member
		if info.Kind == KindResponse {
			res = members
		}
		got := d.Part([]byte(tt.frame), res)
		if got != tt.want {
			t.Errorf("%s: part %v, want %v", tt.frame, got, tt.want)
		}
		if got == PartDelta {
			if text := string(d.DeltaText(nil, []byte(tt.frame), res)); text != tt.delta {
				t.Errorf("%s: delta %q, want %q", tt.frame, text, tt.delta)
			}
		}
		if may := d.MayStream([]byte(tt.frame)); may != tt.may {
			t.Errorf("%s: MayStream %v, want %v", tt.frame, may, tt.may)
		}
		// FramePart: the same, but an escaped part name is taken for a
		// single answer (MayStream said no).
		want := tt.want
		if !tt.may {
			want = PartSingle
		}
		info = Classify([]byte(tt.frame))
		if got := d.FramePart([]byte(tt.frame), &info); got != want {
			t.Errorf("%s: FramePart %v, want %v", tt.frame, got, want)
		}
		wantEnds := info.Kind == KindError || (info.Kind == KindResponse && want.Terminal())
		if got := d.Ends([]byte(tt.frame), &info); got != wantEnds {
			t.Errorf("%s: Ends %v, want %v", tt.frame, got, wantEnds)
		}
	}
}

func TestStreamPartTerminal(t *testing.T) {
	for p, want := range map[StreamPart]bool{PartSingle: true, PartStart: false, PartDelta: false, PartEnd: true} {
		if p.Terminal() != want {
			t.Errorf("%v.Terminal() = %v", p, !want)
		}
	}
}

func TestStreamDialectUsage(t *testing.T) {
	d := LangGraphStream()
	tests := []struct {
		frame string
		want  Usage
		ok    bool
	}{
		{`{"jsonrpc":"2.0","id":8,"result":{"type":"content_end","usage":{"prompt_tokens":20,"completion_tokens":150,"total_tokens":170}}}`, Usage{20, 150, 170}, true},
		{`{"jsonrpc":"2.0","id":8,"result":{"type":"content_end","usage":{"prompt_tokens":2,"completion_tokens":3}}}`, Usage{2, 3, 5}, true},
		{`{"jsonrpc":"2.0","id":8,"result":{"type":"content_end"}}`, Usage{}, false},
		{`{"jsonrpc":"2.0","id":8,"result":{"type":"content_end","usage":{"prompt_tokens":"x"}}}`, Usage{}, false},
	}
	for _, tt := range tests {
		var info Info
		m := ClassifyMembers([]byte(tt.frame), &info, nil)
		got, ok := d.Usage([]byte(tt.frame), m)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: usage %+v %v, want %+v %v", tt.frame, got, ok, tt.want, tt.ok)
		}
	}
}
