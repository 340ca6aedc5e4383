package analysis

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// A Surface is what a server offered in a tape: the tools, prompts,
// resources and resource templates of its list results (every page, the
// last definition of a name winning). mcptape baseline writes one as JSON;
// DiffSurface compares two.

// SurfaceFormat is the version of the baseline file format.
const SurfaceFormat = 1

// Surface kinds, with the list method and result member of each.
const (
	KindTool     = "tool"
	KindPrompt   = "prompt"
	KindResource = "resource"
	KindTemplate = "resource template"
)

// surfaceLists maps a list method to its kind, result member and the
// member that names an entry.
var surfaceLists = map[string]struct{ kind, member, key string }{
	"tools/list":               {KindTool, "tools", "name"},
	"prompts/list":             {KindPrompt, "prompts", "name"},
	"resources/list":           {KindResource, "resources", "uri"},
	"resources/templates/list": {KindTemplate, "resourceTemplates", "uriTemplate"},
}

// Surface is the offer of one server. Definitions are kept as the server
// sent them (one JSON object each), sorted by name.
type Surface struct {
	Format    int           `json:"format"`
	Server    *Peer         `json:"server,omitempty"`
	Tools     []SurfaceItem `json:"tools"`
	Prompts   []SurfaceItem `json:"prompts"`
	Resources []SurfaceItem `json:"resources"`
	Templates []SurfaceItem `json:"resource_templates"`
	// Listed names the kinds the tape listed: a kind never listed is
	// unknown, not empty, and is not compared.
	Listed []string `json:"listed"`
}

// SurfaceItem is one tool, prompt, resource or template.
type SurfaceItem struct {
	Name       string          `json:"name"` // the uri of a resource, the uriTemplate of a template
	Definition json.RawMessage `json:"definition"`
}

// items returns the list of kind.
func (s *Surface) items(kind string) *[]SurfaceItem {
	switch kind {
	case KindTool:
		return &s.Tools
	case KindPrompt:
		return &s.Prompts
	case KindResource:
		return &s.Resources
	}
	return &s.Templates
}

// ReadSurface reads the surface of the tape at path: the list results the
// server sent. A tape with no list result gives an empty surface.
func ReadSurface(ctx context.Context, path string) (*Surface, error) {
	return ReadSurfaceJoined(ctx, path, []string{path})
}

// ReadSurfaceTape reads the surface of an opened tape (such as the joined
// read of a rotated recording's tapes, tape.OpenJoined), as ReadSurface
// does. The caller closes r.
func ReadSurfaceTape(ctx context.Context, r *tape.Reader) (*Surface, error) {
	sc, err := NewScanner(ctx, r)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	type reqKey struct {
		session string
		id      string
	}
	asked := map[reqKey]string{} // list requests in flight: method
	byName := map[string]map[string]json.RawMessage{}
	s := &Surface{Format: SurfaceFormat}
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !it.IsMessage() || !Pairable(it.Info.ID) {
			continue
		}
		k := reqKey{it.Rec.Session, string(it.Info.ID.AppendKey(nil))}
		switch {
		case it.Info.Kind == jsonrpc.KindRequest && it.Rec.Dir == tape.ClientToServer:
			if _, ok := surfaceLists[it.Info.Method]; ok || it.Info.Method == mInitialize {
				asked[k] = it.Info.Method
			}
		case it.Info.Kind == jsonrpc.KindResponse && it.Rec.Dir == tape.ServerToClient:
			method, ok := asked[k]
			if !ok {
				continue
			}
			delete(asked, k)
			result := lookup(it.Frame, "result")
			if method == mInitialize {
				s.Server = serverPeer(result)
				continue
			}
			l := surfaceLists[method]
			if !slices.Contains(s.Listed, l.kind) {
				s.Listed = append(s.Listed, l.kind)
			}
			if byName[l.kind] == nil {
				byName[l.kind] = map[string]json.RawMessage{}
			}
			if err := eachElement(lookup(result, l.member), func(def []byte) {
				if name, ok := lookupString(def, l.key); ok {
					byName[l.kind][name] = bytes.Clone(def)
				}
			}); err != nil {
				return nil, fmt.Errorf("record %d: %s: %w", it.Seq, method, err)
			}
		}
	}
	// A cut tape gives the surface of what was readable.
	for kind, m := range byName {
		list := s.items(kind)
		for name, def := range m {
			*list = append(*list, SurfaceItem{Name: name, Definition: def})
		}
		slices.SortFunc(*list, func(a, b SurfaceItem) int { return cmp.Compare(a.Name, b.Name) })
	}
	s.normalize()
	return s, nil
}

// normalize makes nil lists empty, so that JSON shows [].
func (s *Surface) normalize() {
	slices.Sort(s.Listed)
	if s.Listed == nil {
		s.Listed = []string{}
	}
	for _, l := range []*[]SurfaceItem{&s.Tools, &s.Prompts, &s.Resources, &s.Templates} {
		if *l == nil {
			*l = []SurfaceItem{}
		}
	}
}

// eachElement calls fn with each element of the JSON array raw (nothing
// when raw is absent).
func eachElement(raw []byte, fn func([]byte)) error {
	if len(raw) == 0 {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("not an array: %w", err)
	}
	for _, e := range list {
		fn(e)
	}
	return nil
}

// WriteSurface writes s as indented JSON.
func WriteSurface(w io.Writer, s *Surface) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("write surface: %w", err)
	}
	return nil
}

// LoadSurface reads a surface: a baseline file written by WriteSurface,
// or a tape (whose surface is read).
func LoadSurface(ctx context.Context, path string) (*Surface, error) {
	s, err := ReadSurface(ctx, path)
	if err == nil || !errors.Is(err, tape.ErrNotTape) {
		return s, err
	}
	data, rerr := readSmallFile(path, maxBaseline)
	if rerr != nil {
		return nil, rerr
	}
	s = &Surface{}
	if err := json.Unmarshal(data, s); err != nil || s.Format != SurfaceFormat {
		return nil, fmt.Errorf("%s: neither a tape nor a baseline (format %d) file", path, SurfaceFormat)
	}
	s.normalize()
	return s, nil
}

// maxBaseline bounds the size of a baseline file.
const maxBaseline = 64 << 20

// readSmallFile reads the file at path, refusing one larger than limit.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}
