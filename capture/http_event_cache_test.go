package capture

import (
	"net/http"
	"testing"
)

// TestHeaderCache: a headerCache gives, for each header map of a sequence,
// the bytes the map's redaction and encoding give, whether the map equals
// the one before it or differs from it in a value, a name, a count of
// values, a secret or an empty value list.
func TestHeaderCache(t *testing.T) {
	base := http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}, "Mcp-Session-Id": {"S1"}}
	with := func(name string, values []string) http.Header {
		h := base.Clone()
		h[name] = values
		return h
	}
	without := func(name string) http.Header {
		h := base.Clone()
		delete(h, name)
		return h
	}
	tests := []struct {
		name string
		h    http.Header
		hit  bool // the cache gives the bytes it kept
	}{
		{"first", base, false},
		{"same", base.Clone(), true},
		{"value changed", with("Mcp-Session-Id", []string{"S2"}), false},
		{"same again", with("Mcp-Session-Id", []string{"S2"}), true},
		{"back", base, false},
		{"name added", with("X-Other", []string{"1"}), false},
		{"name removed", without("Accept"), false},
		{"name swapped", with("Accept-Language", []string{"en"}), false},
		{"same count, other name", func() http.Header { h := without("Accept"); h["Accept-Language"] = []string{"en"}; return h }(), false},
		{"second value", with("Accept-Language", []string{"en", "de"}), false},
		{"secret", with("Authorization", []string{"Bearer abcdefgh"}), false},
		{"secret again", with("Authorization", []string{"Bearer abcdefgh"}), true},
		{"secret longer", with("Authorization", []string{"Bearer abcdefghijklmnopq"}), false},
		{"url secret", with("Referer", []string{"https://x.test/cb?code=123"}), false},
		{"empty values", with("X-Empty", []string{}), false},
		{"empty values again", with("X-Empty", []string{}), false}, // not kept
		{"nil values", with("X-Empty", nil), false},
		{"empty map", http.Header{}, false},
		{"after empty", base, false},
	}
	r := &headerRedactor{}
	var c headerCache
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []byte
			if len(tt.h) > 0 {
				want = appendHeaderObject(nil, r.headers(tt.h))
			}
			if len(c.enc) > 0 {
				c.enc[0] = '#' // marks the bytes kept: encoding again writes '{'
			}
			got := c.encode(r, tt.h)
			hit := len(got) > 0 && got[0] == '#'
			if hit {
				got[0] = '{'
			}
			if string(got) != string(want) {
				t.Errorf("encode = %s, want %s", got, want)
			}
			if hit != tt.hit {
				t.Errorf("cache hit = %v, want %v", hit, tt.hit)
			}
		})
	}
}

// TestHeaderCacheBound: a header encoding over maxHeaderCache bytes is
// given but not kept.
func TestHeaderCacheBound(t *testing.T) {
	big := make([]byte, maxHeaderCache)
	for i := range big {
		big[i] = 'a'
	}
	h := http.Header{"X-Big": {string(big)}}
	var c headerCache
	r := &headerRedactor{}
	if got, want := string(c.encode(r, h)), string(appendHeaderObject(nil, h)); got != want {
		t.Fatalf("encode = %.40s..., want %.40s...", got, want)
	}
	if c.ok || c.enc != nil {
		t.Errorf("a %d-byte encoding was kept", len(big))
	}
}
