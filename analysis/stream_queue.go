package analysis

import "github.com/mcptape/mcptape/jsonrpc"

// touchAhead reads a byte of each cache line of the slot and the first
// touchBytes of the frame of the record touchDistance places after the
// one being yielded, in the chunk at hand. What the reading goroutine
// wrote on the other core has left this core's caches by then; read now,
// it arrives while the records before it are handled (measured, when the
// records waited in a reordering queue: inspect's median CPU -9 %,
// 1 M-message tape).
func (s *Scanner) touchAhead() {
	if i := s.pos - 1 + touchDistance; i < len(s.cur) {
		it := &s.cur[i].item
		f := it.Rec.Frame[:min(len(it.Rec.Frame), touchBytes)]
		s.touched += it.Info.Kind
		for i := 0; i < len(f); i += 64 {
			s.touched += jsonrpc.Kind(f[i])
		}
	}
}

// How far ahead touchAhead reads, and how much of a frame.
const (
	touchDistance = 32
	touchBytes    = 512
)
