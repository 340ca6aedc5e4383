package jsonrpc

import "unicode/utf8"

// Classify reads one frame and reports what it is. It makes a single
// validating pass, reads only the keys of the top-level object, descends only
// into params and error. It allocates only for the name of a method that is
// not a known MCP method and for nesting deeper than 64 levels (one bit
// stack). It never panics, whatever the input.
//
// An invalid JSON frame gives KindInvalid with ViolationInvalidJSON and
// nothing else. A batch gives KindBatch and BatchLen; its members are not
// classified (use Split, then Classify each member).
func Classify(frame []byte) Info {
	s := scanner{b: frame}
	var info Info
	s.classify(&info)
	return info
}

// classify is Classify on s.b into *info (listing members when s.list is
// set).
func (s *scanner) classify(info *Info) {
	frame := s.b
	*info = Info{}
	i := s.ws(0)
	switch {
	case i >= len(frame):
		s.fail(i, errEmpty)
	case frame[i] == '{':
		var m message
		if i = s.message(i, &m); i >= 0 {
			s.finish(&m, info)
		}
	case frame[i] == '[':
		i = s.batch(i, info)
	default:
		i = s.value(i, 0)
		info.Violations |= ViolationNotObject
	}
	if i >= 0 {
		if j := s.ws(i); j < len(frame) {
			s.fail(j, errTrailingData)
		}
	}
	if s.failed() {
		*info = Info{Kind: KindInvalid, Violations: ViolationInvalidJSON}
		return
	}
	if s.badUTF8 {
		info.Violations |= ViolationInvalidUTF8
	}
}

// span is the position of a value in the frame; end == 0 means absent.
type span struct{ start, end int }

func (p span) ok() bool { return p.end > 0 }

// message is what the single pass over a top-level object collects.
type message struct {
	jsonrpc, id, method span
	idFrac              bool // a number id has a fraction or an exponent
	version20           bool // jsonrpc is the plain string "2.0" (versionPrefix)
	methodEsc           bool
	result              bool
	params              paramsSpan
	err                 errorSpan
}

type paramsSpan struct {
	present, structured bool
	metaToken           span // params._meta.progressToken
	token               span // params.progressToken
	requestID           span // params.requestId
}

type errorSpan struct {
	present, object bool
	code, message   span
}

// keyName identifies the keys Classify cares about.
type keyName uint8

const (
	keyOther keyName = iota
	keyJSONRPC
	keyID
	keyMethod
	keyParams
	keyResult
	keyError
	keyMeta
	keyProgressToken
	keyRequestID
	keyCode
	keyMessage
)

func keyOf(name []byte) keyName {
	// By length first: each comparison with a short constant then compiles
	// to a few word compares, where a string switch calls the runtime.
	switch len(name) {
	case 2:
		if string(name) == "id" {
			return keyID
		}
	case 4:
		if string(name) == "code" {
			return keyCode
		}
	case 5:
		switch {
		case string(name) == "error":
			return keyError
		case string(name) == "_meta":
			return keyMeta
		}
	case 6:
		switch {
		case string(name) == "method":
			return keyMethod
		case string(name) == "params":
			return keyParams
		case string(name) == "result":
			return keyResult
		}
	case 7:
		switch {
		case string(name) == "jsonrpc":
			return keyJSONRPC
		case string(name) == "message":
			return keyMessage
		}
	case 9:
		if string(name) == "requestId" {
			return keyRequestID
		}
	case 13:
		if string(name) == "progressToken" {
			return keyProgressToken
		}
	}
	return keyOther
}

// longestKey is the length of the longest name keyOf knows.
const longestKey = len("progressToken")

// keyAt names the key whose quoted text is b[ks:ke], unescaping it first
// when it holds escapes ("meth\u006fd" is "method").
func (s *scanner) keyAt(ks, ke int, esc bool) keyName {
	raw := s.b[ks+1 : ke-1]
	if !esc {
		return keyOf(raw)
	}
	// An escape stands for at least one byte and takes at most six, so a
	// longer key cannot decode to a known name.
	if len(raw) > 6*longestKey {
		return keyOther
	}
	var buf [6 * longestKey]byte
	return keyOf(appendUnquoted(buf[:0], raw))
}

// message scans the object whose '{' is at b[i], collecting m.
func (s *scanner) message(i int, m *message) int {
	it := objIter{s: s, i: i + 1}
	// Most frames start with the version, written compactly: that first
	// member is then taken at once (16 bytes compare as two words).
	if len(s.b)-i >= len(versionPrefix) && string(s.b[i:i+len(versionPrefix)]) == versionPrefix {
		m.jsonrpc = span{i + len(versionPrefix) - len(`"2.0"`), i + len(versionPrefix)}
		m.version20 = true
		it.i, it.n = i+len(versionPrefix), 1
	}
	for {
		var key keyName
		if k, v, ok := s.topKey(it.i); ok && it.n > 0 {
			key, it.i = k, v
			it.n++
		} else {
			ks, ke, esc, ok := it.next()
			if !ok {
				break
			}
			key = s.keyAt(ks, ke, esc)
		}
		v, end := it.i, 0
		switch key {
		case keyJSONRPC:
			end = s.skip(v, 1)
			m.jsonrpc, m.version20 = span{v, end}, false
		case keyID:
			end = s.skip(v, 1)
			m.id, m.idFrac = span{v, end}, s.numFrac // numFrac: for a number id only
		case keyMethod:
			m.methodEsc = false
			if v < len(s.b) && s.b[v] == '"' {
				end, m.methodEsc = s.str(v)
			} else {
				end = s.skip(v, 1)
			}
			m.method = span{v, end}
		case keyParams:
			end = s.params(v, &m.params)
		case keyResult:
			if s.list && v < len(s.b) && s.b[v] == '{' {
				end, s.resultAt = s.objectMembers(v)
			} else {
				end, s.resultAt = s.skip(v, 1), memberRange{}
			}
			m.result = true
		case keyError:
			end = s.errorObject(v, &m.err)
		default:
			end = s.skip(v, 1)
		}
		if end < 0 {
			return -1
		}
		it.i = end
	}
	if s.failed() {
		return -1
	}
	return it.i
}

// params scans the value of "params" at b[v] (depth 2 when an object).
func (s *scanner) params(v int, p *paramsSpan) int {
	*p = paramsSpan{present: true}
	s.paramsAt = memberRange{}
	if v >= len(s.b) || s.b[v] != '{' {
		p.structured = v < len(s.b) && s.b[v] == '['
		return s.skip(v, 1)
	}
	p.structured = true
	it := objIter{s: s, i: v + 1}
	from := len(s.members)
	for {
		ks, ke, esc, ok := it.next()
		if !ok {
			break
		}
		v, end := it.i, 0
		switch s.keyAt(ks, ke, esc) {
		case keyMeta:
			end = s.meta(v, &p.metaToken)
		case keyProgressToken:
			end = s.skip(v, 2)
			p.token = span{v, end}
		case keyRequestID:
			end = s.skip(v, 2)
			p.requestID = span{v, end}
		default:
			end = s.skip(v, 2)
		}
		if end < 0 {
			return -1
		}
		if s.list {
			s.members = append(s.members, Member{Key: Span{ks, ke}, Value: Span{v, end}, KeyEscaped: esc})
		}
		it.i = end
	}
	if s.failed() {
		return -1
	}
	s.paramsAt = memberRange{from, len(s.members)}
	return it.i
}

// meta scans the value of params._meta at b[v] for its progressToken.
func (s *scanner) meta(v int, tok *span) int {
	*tok = span{}
	if v >= len(s.b) || s.b[v] != '{' {
		return s.skip(v, 2)
	}
	it := objIter{s: s, i: v + 1}
	for {
		ks, ke, esc, ok := it.next()
		if !ok {
			break
		}
		v := it.i
		end := s.skip(v, 3)
		if end < 0 {
			return -1
		}
		if s.keyAt(ks, ke, esc) == keyProgressToken {
			*tok = span{v, end}
		}
		it.i = end
	}
	if s.failed() {
		return -1
	}
	return it.i
}

// errorObject scans the value of "error" at b[v] for code and message.
func (s *scanner) errorObject(v int, e *errorSpan) int {
	*e = errorSpan{present: true}
	if v >= len(s.b) || s.b[v] != '{' {
		return s.skip(v, 1)
	}
	e.object = true
	it := objIter{s: s, i: v + 1}
	for {
		ks, ke, esc, ok := it.next()
		if !ok {
			break
		}
		v := it.i
		end := s.skip(v, 2)
		if end < 0 {
			return -1
		}
		switch s.keyAt(ks, ke, esc) {
		case keyCode:
			e.code = span{v, end}
		case keyMessage:
			e.message = span{v, end}
		}
		it.i = end
	}
	if s.failed() {
		return -1
	}
	return it.i
}

// batch scans the array whose '[' is at b[i], counting its members.
func (s *scanner) batch(i int, info *Info) int {
	info.Kind = KindBatch
	it := arrIter{s: s, i: i + 1}
	for {
		if _, _, ok := it.next(); !ok {
			break
		}
	}
	if s.failed() {
		return -1
	}
	info.BatchLen = it.n
	if it.n == 0 {
		info.Violations |= ViolationEmptyBatch
	}
	return it.i
}

// arrIter walks the members of one array at depth 1.
type arrIter struct {
	s *scanner
	i int // after '[' at first; then after each member
	n int // members returned so far
}

// next returns the span of the next member. ok is false at the closing
// bracket (it.i is then after it) or on a syntax error.
func (it *arrIter) next() (start, end int, ok bool) {
	s := it.s
	start, more := s.member(&it.i, it.n, ']', errEOFArray, errArraySep)
	if !more {
		return 0, 0, false
	}
	if end = s.value(start, 1); end < 0 {
		return
	}
	it.i = end
	it.n++
	return start, end, true
}

// idAt turns a span into an ID (capacity clipped, so that appending to Raw
// can never write into the frame).
func (s *scanner) idAt(p span) ID {
	if !p.ok() {
		return ID{}
	}
	raw := s.b[p.start:p.end:p.end]
	t := IDNumber
	switch raw[0] {
	case '"':
		t = IDString
	case 'n':
		t = IDNull
	case '{', '[', 't', 'f':
		t = IDOther
	}
	return ID{Raw: raw, Type: t, Start: p.start, End: p.end}
}

// finish turns what message collected into info.
func (s *scanner) finish(m *message, info *Info) {
	info.ID = s.idAt(m.id)
	hasMethod := m.method.ok()
	switch {
	case hasMethod && m.id.ok():
		info.Kind = KindRequest
	case hasMethod:
		info.Kind = KindNotification
	case m.err.present:
		info.Kind = KindError
	case m.result:
		info.Kind = KindResponse
	}

	var v Violation
	if !m.jsonrpc.ok() {
		v |= ViolationMissingJSONRPC
	} else if !m.version20 && !s.isVersion(m.jsonrpc) {
		v |= ViolationWrongJSONRPC
	}
	switch info.Kind {
	case KindRequest, KindNotification:
		if s.b[m.method.start] == '"' {
			info.Method = s.methodName(m.method, m.methodEsc)
		} else {
			v |= ViolationBadMethod
		}
		if m.result || m.err.present {
			v |= ViolationMethodWithResult
		}
		if m.params.present && !m.params.structured {
			v |= ViolationBadParams
		}
		v |= s.tokens(m, info)
	case KindResponse, KindError:
		v |= idViolations(info.ID, m.idFrac, false)
		if info.Kind == KindResponse {
			if info.ID.Type == IDAbsent || info.ID.Type == IDNull {
				v |= ViolationResultWithoutID
			}
			break
		}
		if m.result {
			v |= ViolationResultAndError
		}
		v |= s.errorViolations(&m.err, info)
	default:
		if m.id.ok() {
			v |= ViolationNoResultOrError
		} else {
			v |= ViolationNotMessage
		}
	}
	info.Violations |= v
}

// tokens sets the id, progress token and cancel target checks of a request
// or notification.
func (s *scanner) tokens(m *message, info *Info) Violation {
	var v Violation
	if info.Kind == KindRequest {
		v |= idViolations(info.ID, m.idFrac, true)
		if m.params.metaToken.ok() {
			info.ProgressToken = s.idAt(m.params.metaToken)
			if !info.ProgressToken.scalarInteger() {
				v |= ViolationBadProgressToken
			}
		}
		return v
	}
	switch info.Method {
	case MethodProgress:
		info.ProgressToken = s.idAt(m.params.token)
		if !info.ProgressToken.scalarInteger() {
			v |= ViolationBadProgressToken
		}
	case MethodCancelled:
		if m.params.requestID.ok() {
			info.CancelTarget = s.idAt(m.params.requestID)
			if !info.CancelTarget.scalarInteger() {
				v |= ViolationBadCancelTarget
			}
		}
	}
	return v
}

// idViolations checks the type of a request or response id; frac
// reports whether a number id has a fraction or an exponent.
func idViolations(id ID, frac, request bool) Violation {
	switch id.Type {
	case IDNull:
		if request {
			return ViolationNullRequestID
		}
	case IDOther:
		return ViolationBadIDType
	case IDNumber:
		if frac {
			return ViolationNonIntegerID
		}
	}
	return 0
}

// errorViolations checks the error object and sets the error code.
func (s *scanner) errorViolations(e *errorSpan, info *Info) Violation {
	if !e.object {
		return ViolationErrorNotObject
	}
	var v Violation
	if e.code.ok() {
		info.ErrorCode, info.HasErrorCode = parseInt64(s.b[e.code.start:e.code.end])
	}
	if !info.HasErrorCode {
		v |= ViolationBadErrorCode
	}
	if !e.message.ok() || s.b[e.message.start] != '"' {
		v |= ViolationMissingErrorMessage
	}
	return v
}

// parseInt64 parses a JSON value written as a plain integer that fits in
// an int64. "-0" is 0; fractions, exponents and other types are refused.
func parseInt64(raw []byte) (int64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	digits := raw
	if neg {
		digits = raw[1:]
	}
	if len(digits) == 0 {
		return 0, false
	}
	limit := uint64(1<<63 - 1)
	if neg {
		limit = 1 << 63
	}
	var u uint64
	for _, c := range digits {
		if !isDigit(c) {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (limit-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to itself: correct
	}
	return int64(u), true
}

// isVersion reports whether the jsonrpc value is the string "2.0".
func (s *scanner) isVersion(p span) bool {
	raw := s.b[p.start:p.end]
	if string(raw) == `"2.0"` {
		return true
	}
	if raw[0] != '"' || len(raw) > 2+6*3 {
		return false
	}
	var buf [6 * 3]byte
	return string(appendUnquoted(buf[:0], raw[1:len(raw)-1])) == "2.0"
}

// maxStackMethod is the longest escaped method name unescaped on the stack.
const maxStackMethod = 64

// methodName returns the unescaped method string, interned when known.
func (s *scanner) methodName(p span, esc bool) string {
	raw := s.b[p.start+1 : p.end-1]
	if !esc {
		if name, ok := internMethod(raw); ok {
			return name
		}
		if utf8.Valid(raw) {
			return string(raw)
		}
		return string(appendUnquoted(nil, raw))
	}
	var buf [maxStackMethod]byte
	dec := appendUnquoted(buf[:0], raw)
	if name, ok := internMethod(dec); ok {
		return name
	}
	return string(dec)
}
