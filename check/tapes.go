package check

// Tapes read joined: a rotated recording's tapes checked as one tape.

import (
	"context"
	"fmt"

	"github.com/mcptape/mcptape/analysis"
)

// Tape is one tape of a run: a file, or the files of one recording (a
// rotated recording's tapes) read joined as one tape (tape.OpenJoined:
// in order, its sessions continuing from one file to the next), under
// Name.
type Tape struct {
	Name  string   // what the cases and errors call it
	Paths []string // one file, or the files read joined
}

// RunTapes checks tapes as one run, as Run does, each Tape one tape of it:
// the files of a Tape are inspected (and compared with the baseline) as
// one joined recording, so a session cut by a rotation is one session,
// and the verdict and the cases are the Tape's, under its Name.
func RunTapes(ctx context.Context, tapes []Tape, opts ...Option) (*Result, error) {
	names := make([]string, len(tapes))
	joined := map[string][]string{}
	for i, t := range tapes {
		if len(t.Paths) == 0 {
			return nil, fmt.Errorf("check: tape %q has no file", t.Name)
		}
		names[i] = t.Name
		if len(t.Paths) > 1 || t.Paths[0] != t.Name {
			joined[t.Name] = t.Paths
		}
	}
	set := func(o *options) error { o.joined = joined; return nil }
	return Run(ctx, names, append(opts, set)...)
}

// inspectTape inspects the tape of the run named path: a file, or the
// files RunTapes joins under that name.
func (o *options) inspectTape(ctx context.Context, path string) (*analysis.Report, error) {
	opts := append([]analysis.Option{analysis.WithSessionDetails(maxDetails)}, o.inspect...) // each session's first details
	return analysis.InspectJoined(ctx, path, o.paths(path), opts...)
}

// readSurface reads the surface of the tape of the run named path, as
// inspectTape reads it.
func (o *options) readSurface(ctx context.Context, path string) (*analysis.Surface, error) {
	return analysis.ReadSurfaceJoined(ctx, path, o.paths(path))
}

// paths returns the files of the tape of the run named path.
func (o *options) paths(path string) []string {
	if paths, ok := o.joined[path]; ok {
		return paths
	}
	return []string{path}
}
