package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzClassify: no input panics or hangs, and the verdicts agree with
// encoding/json (validity, method, id, tokens, params or result members
// listed by ClassifyMembers, batch members).
func FuzzClassify(f *testing.F) {
	for _, s := range seedFrames() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		crossCheck(t, frame)
	})
}

// FuzzSplit: Split succeeds exactly on valid JSON arrays and returns the
// members encoding/json sees, as sub-slices of the frame.
func FuzzSplit(f *testing.F) {
	for _, s := range seedFrames() {
		f.Add(s)
	}
	f.Add([]byte(`[]`))
	f.Add([]byte(` [1 , "a" ,{"b":[2]} ] `))
	f.Fuzz(func(t *testing.T, frame []byte) {
		dst := [][]byte{[]byte("keep")}
		got, err := AppendSplit(dst, frame)
		var want []json.RawMessage
		wantErr := json.Unmarshal(frame, &want)
		if trimmed := bytes.TrimLeft(frame, " \t\r\n"); wantErr == nil && trimmed[0] != '[' {
			wantErr = ErrNotBatch // null decodes into a nil slice
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("AppendSplit(%q) error %v, encoding/json %v", clip(frame), err, wantErr)
		}
		if string(got[0]) != "keep" {
			t.Fatalf("AppendSplit(%q) changed dst[0]", clip(frame))
		}
		if err != nil {
			if len(got) != 1 {
				t.Fatalf("AppendSplit(%q) returned %d entries with error %v", clip(frame), len(got), err)
			}
			return
		}
		members := got[1:]
		if len(members) != len(want) {
			t.Fatalf("AppendSplit(%q) = %d members, want %d", clip(frame), len(members), len(want))
		}
		for i, m := range members {
			if !bytes.Equal(m, want[i]) || !within(frame, m) {
				t.Fatalf("member %d = %q, want %q inside the frame", i, m, want[i])
			}
		}
	})
}

// within reports whether sub shares memory with frame (is a sub-slice).
func within(frame, sub []byte) bool {
	if len(sub) == 0 {
		return true
	}
	for i := range len(frame) - len(sub) + 1 {
		if &frame[i] == &sub[0] {
			return true
		}
	}
	return false
}

// FuzzRewrite: rewriting an id, token or cancel target then classifying
// gives the new value, and the frame is otherwise byte-identical; when the
// rewrite is refused there is a reason.
func FuzzRewrite(f *testing.F) {
	values := [][]byte{[]byte(`1`), []byte(`"live-7"`), []byte(`-0.5e3`), []byte(`"\u00e9\n"`), []byte(`{}`), []byte(` 2`)}
	for i, s := range seedFrames() {
		f.Add(s, uint8(i%3), values[i%len(values)])
	}
	f.Fuzz(func(t *testing.T, frame []byte, which uint8, newRaw []byte) {
		target := Target(which%3 + 1)
		orig := bytes.Clone(frame)
		out, err := AppendRewrite(nil, frame, target, newRaw)
		if !bytes.Equal(frame, orig) {
			t.Fatal("AppendRewrite modified its input frame")
		}
		before := Classify(frame)
		old := pick(before, target)
		if err != nil {
			reason := checkScalar(newRaw) != nil || before.Violations.Has(ViolationInvalidJSON) ||
				before.Kind == KindBatch || old.Type == IDAbsent
			if !reason {
				t.Fatalf("AppendRewrite(%q, %v, %q) refused without reason: %v", clip(frame), target, newRaw, err)
			}
			if old.Type == IDAbsent && checkScalar(newRaw) == nil && before.Kind != KindBatch && !errors.Is(err, ErrNoTarget) &&
				!before.Violations.Has(ViolationInvalidJSON) {
				t.Fatalf("missing target error %v is not ErrNoTarget", err)
			}
			return
		}
		if old.Type == IDAbsent || checkScalar(newRaw) != nil {
			t.Fatalf("AppendRewrite(%q, %v, %q) accepted: target %v", clip(frame), target, newRaw, old)
		}
		// Byte-identical outside the replaced value.
		if !bytes.Equal(out[:old.Start], frame[:old.Start]) ||
			!bytes.Equal(out[old.Start:old.Start+len(newRaw)], newRaw) ||
			!bytes.Equal(out[old.Start+len(newRaw):], frame[old.End:]) {
			t.Fatalf("AppendRewrite(%q) = %q: not a clean splice at [%d:%d]", clip(frame), clip(out), old.Start, old.End)
		}
		after := Classify(out)
		now := pick(after, target)
		if after.Kind != before.Kind || after.Method != before.Method || now.Start != old.Start || !bytes.Equal(now.Raw, newRaw) {
			t.Fatalf("after rewrite %q: kind %v method %q %v %q at %d, want %v %q %q at %d", clip(out),
				after.Kind, after.Method, target, now.Raw, now.Start, before.Kind, before.Method, newRaw, old.Start)
		}
		// Rewriting back restores the frame exactly, when the old value
		// was itself an acceptable replacement.
		if checkScalar(old.Raw) == nil {
			back, err := AppendRewrite(nil, out, target, old.Raw)
			if err != nil || !bytes.Equal(back, frame) {
				t.Fatalf("rewrite back of %q gave %q, %v", clip(out), clip(back), err)
			}
		}
	})
}

func pick(info Info, t Target) ID {
	switch t {
	case TargetProgressToken:
		return info.ProgressToken
	case TargetCancelTarget:
		return info.CancelTarget
	}
	return info.ID
}
