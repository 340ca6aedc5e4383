package analysis

// Tapes read joined: the files of a rotated recording (or of several
// recordings) inspected as one tape, under one name.

import (
	"context"
	"fmt"

	"github.com/mcptape/mcptape/tape"
)

// InspectJoined inspects the files at paths read as one tape
// (tape.OpenJoined: a rotated recording's tapes in order, its sessions
// continuing from one file to the next; several recordings merged, their
// sessions kept apart), as Inspect inspects one file; one path is read as
// Inspect reads it. name is what the report (File) and errors call it.
func InspectJoined(ctx context.Context, name string, paths []string, opts ...Option) (*Report, error) {
	rep, err := readJoined(ctx, paths, "inspect "+name, func(ctx context.Context, r *tape.Reader) (*Report, error) {
		return InspectTape(ctx, r, opts...)
	})
	if err != nil {
		return nil, err
	}
	rep.File = name
	return rep, nil
}

// ReadSurfaceJoined reads the surface of the files at paths read as one
// tape, as InspectJoined reads them; name is what errors call it.
func ReadSurfaceJoined(ctx context.Context, name string, paths []string) (*Surface, error) {
	return readJoined(ctx, paths, "surface of "+name, ReadSurfaceTape)
}

// readJoined opens paths as one tape, reads it with read and closes it;
// an error of read is wrapped with what.
func readJoined[T any](ctx context.Context, paths []string, what string, read func(context.Context, *tape.Reader) (T, error)) (T, error) {
	var zero T
	r, err := tape.OpenJoined(paths)
	if err != nil {
		return zero, err
	}
	defer r.Close()
	v, err := read(ctx, r)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}
