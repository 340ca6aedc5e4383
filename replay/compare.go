package replay

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcptape/mcptape/internal/jsondiff"
)

// newComparer returns the comparer of responses: jsondiff's default ignore
// paths (ids, _meta, session and task ids, timestamps, request state) plus
// the paths given with WithIgnore; entries naming a notification method
// are for the counts and left out here.
func newComparer(paths []string) (*jsondiff.Comparer, error) {
	var keep []string
	for _, p := range paths {
		if !isNotificationMethod(p) {
			keep = append(keep, p)
		}
	}
	return jsondiff.New(jsondiff.WithIgnore(keep...), jsondiff.WithMaxDiffs(maxDiffs))
}

// maxDiffs is the most differences kept for one response.
const maxDiffs = 20

// isNotificationMethod reports whether an --ignore entry names a
// notification method rather than a path.
func isNotificationMethod(p string) bool { return strings.HasPrefix(p, "notifications/") }

// decodeJSON decodes a frame keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
