package jsonrpc

// Span is the position of a JSON value (or a quoted key) in a frame:
// frame[Start:End].
type Span struct{ Start, End int }

// Of returns frame[p.Start:p.End].
func (p Span) Of(frame []byte) []byte { return frame[p.Start:p.End] }

// Member is one member of an object in a frame: its key, quotes included,
// and its value, both as positions in the frame.
type Member struct {
	Key, Value Span
	// KeyEscaped reports whether the key holds a backslash escape (its
	// raw bytes are then not its name).
	KeyEscaped bool
}

// ClassifyMembers is Classify into *info that also lists, in the same
// single pass, the members of the message's payload object: params of a
// request or a notification, result of a success response (the last
// occurrence, when the key repeats, like the rest of Info). They are
// appended to dst[:0] in frame order, duplicates included, and returned.
// The list is empty when the payload is absent or not an object, for other
// kinds, and for an invalid frame. It allocates only where Classify does
// and when dst is too short: a caller that reuses the returned slice stops
// allocating. Writing the Info in place spares copying it.
func ClassifyMembers(frame []byte, info *Info, dst []Member) []Member {
	s := scanner{b: frame, list: true, members: dst[:0]}
	s.classify(info)
	var r memberRange
	switch info.Kind {
	case KindRequest, KindNotification:
		r = s.paramsAt
	case KindResponse:
		r = s.resultAt
	}
	if r.from == 0 { // the usual case: nothing to move
		return s.members[:r.to]
	}
	n := copy(s.members, s.members[r.from:r.to])
	return s.members[:n]
}

// memberRange is where the members of one object are in scanner.members.
type memberRange struct{ from, to int }

// objectMembers scans the object whose '{' is at b[v] (at depth 1) and
// lists its members; it returns the position after it.
func (s *scanner) objectMembers(v int) (int, memberRange) {
	r := memberRange{from: len(s.members)}
	it := objIter{s: s, i: v + 1}
	for {
		ks, ke, esc, ok := it.next()
		if !ok {
			break
		}
		end := s.skip(it.i, 2)
		if end < 0 {
			return -1, r
		}
		s.members = append(s.members, Member{Key: Span{ks, ke}, Value: Span{it.i, end}, KeyEscaped: esc})
		it.i = end
	}
	if s.failed() {
		return -1, r
	}
	r.to = len(s.members)
	return it.i, r
}
