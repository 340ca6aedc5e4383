package main

import (
	"strconv"
	"testing"
)

// FuzzParseSize: a --rotate-size or --keep-size value is accepted only as
// a byte count from 0, and the count written as plain digits reads back
// the same.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"123", "64k", "100M", "1.5MiB", "10MB", "1T", "NaN", "-1k", "1e30G", "Inf", "0x10", "8E"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d, negative", s, n)
		}
		if again, err := parseSize(strconv.FormatInt(n, 10)); err != nil || again != n {
			t.Fatalf("parseSize(%q) = %d, which reads back as %d, %v", s, n, again, err)
		}
	})
}
