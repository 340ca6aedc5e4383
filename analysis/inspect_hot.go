package analysis

// hotSize is how many entries a hot cache holds.
const hotSize = 8

// hot keeps the last few entries looked up in one of the Inspector's maps
// at hand. A tape's messages repeat a handful of methods and names, whose
// strings are mostly the same interned strings from one message to the
// next: comparing them (equal pointers compare at once) costs less than
// hashing them for a map lookup. Entries must stay valid as long as the
// map entry they mirror, which the Inspector never deletes.
type hot[K comparable, V any] struct {
	keys [hotSize]K
	vals [hotSize]V
	n    int // entries in use
	next int // the entry put replaces
}

// get returns the value cached for k.
func (h *hot[K, V]) get(k K) (v V, ok bool) {
	for i := 0; i < h.n; i++ {
		if h.keys[i] == k {
			return h.vals[i], true
		}
	}
	return v, false
}

// put caches v for k, replacing the oldest entry when full.
func (h *hot[K, V]) put(k K, v V) {
	h.keys[h.next], h.vals[h.next] = k, v
	h.next = (h.next + 1) % hotSize
	h.n = min(h.n+1, hotSize)
}

// getBytes is get for a string key given as bytes, without converting them.
func getBytes[V any](h *hot[string, V], k []byte) (v V, ok bool) {
	for i := 0; i < h.n; i++ {
		if h.keys[i] == string(k) {
			return h.vals[i], true
		}
	}
	return v, false
}
