package analysis

// The members of a message's params or result that the inspector reads,
// located once by the Scanner's reading goroutine.

import "github.com/mcptape/mcptape/jsonrpc"

// Members of params and result read by the inspector, found in one walk
// (topFields); the indexes below name their places.
var (
	paramKeys  = []string{"name", "uri", "taskId", "task", "inputResponses", "requestState", "_meta", "protocolVersion", "clientInfo", "progress"}
	resultKeys = []string{"resultType", "isError", "task", "taskId", "status", "serverInfo", "protocolVersion", "_meta",
		streamDialect.TypeKey}

	paramIndex, resultIndex = newKeyIndex(paramKeys), newKeyIndex(resultKeys)
)

// keyIndex finds a name among a few keys by its length first: at most
// keysPerLen string comparisons instead of one per key.
type keyIndex struct {
	keys  []string
	byLen [keyIndexLen][keysPerLen]int8 // indexes in keys plus one; 0 ends
}

const (
	keyIndexLen = 16 // longer than any key
	keysPerLen  = 2  // keys of one length at most
)

func newKeyIndex(keys []string) *keyIndex {
	x := &keyIndex{keys: keys}
	for k, key := range keys {
		at := &x.byLen[len(key)] // panics at init if a key is too long
		n := 0
		for n < keysPerLen && at[n] != 0 {
			n++
		}
		at[n] = int8(k + 1) // panics at init if too many keys share a length
	}
	return x
}

// find returns the index of name in the keys, or -1.
func (x *keyIndex) find(name []byte) int {
	if len(name) >= keyIndexLen {
		return -1
	}
	for _, k := range x.byLen[len(name)] {
		if k == 0 {
			break
		}
		if string(name) == x.keys[k-1] {
			return int(k - 1)
		}
	}
	return -1
}

const (
	pName = iota
	pURI
	pTaskID
	pTask
	pInputResponses
	pRequestState
	pMeta
	pProtocolVersion
	pClientInfo
	pProgress // of notifications/progress
	paramCount
)

const (
	rResultType = iota
	rIsError
	rTask
	rTaskID
	rStatus
	rServerInfo
	rProtocolVersion
	rMeta
	rStreamType // the stream dialect's part member ("type")
	resultCount
)

// fieldSet is where the members of a message's params (paramKeys, for a
// request or a notification) or result (resultKeys, for a response) are.
// The Scanner's reading goroutine finds them from the members
// jsonrpc.ClassifyMembers listed, while the frame is in its core's cache;
// the Inspector's goroutine then reads only the frame bytes it needs.
//
// The reading goroutine also reads an integer id the way the Pairer keys
// it, so that the Inspector's goroutine pairs a response without reading
// its frame: a record reaches it up to thousands of records after it was
// read (the read-ahead chunks), when the frame has left the cache.
type fieldSet struct {
	at    [paramCount]span // absent: end 0
	idInt bool             // the id is an integer the Pairer keys by value: idNum
	idNum int64            // its value
}

// The result fields fit in a fieldSet.
var _ [paramCount - resultCount]struct{}

// fill finds the fields of frame from its classification.
func (fs *fieldSet) fill(frame []byte, info *jsonrpc.Info, members []jsonrpc.Member) {
	var keys *keyIndex
	switch info.Kind {
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		keys = paramIndex
	case jsonrpc.KindResponse:
		keys = resultIndex
	}
	fs.idNum, fs.idInt = 0, false
	if info.ID.Type == jsonrpc.IDNumber {
		fs.idNum, fs.idInt = plainInt(info.ID.Raw)
	}
	fs.at = [paramCount]span{}
	if keys == nil {
		return
	}
	for _, m := range members {
		name := frame[m.Key.Start+1 : m.Key.End-1]
		if m.KeyEscaped {
			if v, ok := stringValue(frame[m.Key.Start:m.Key.End]); ok {
				name = []byte(v)
			}
		}
		if k := keys.find(name); k >= 0 {
			fs.at[k] = span{m.Value.Start, m.Value.End}
		}
	}
}

// payloadFields returns where the members keys of the message's params or
// result object (named top) are (end 0 where absent): the fields the
// Scanner found, or out filled by walking the frame. The caller only reads
// the result.
func payloadFields(it *Item, top string, keys []string, out []span) []span {
	if fs := it.fields; fs != nil {
		return fs.at[:len(out)] // read only, like out
	}
	if !topFields(it.Frame, top, keys, out) {
		clear(out)
	}
	return out
}
