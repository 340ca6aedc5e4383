package tape

// Series of rotated tapes on disk: their names, listing and retention.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SegmentFile is one tape of a rotated series found on disk.
type SegmentFile struct {
	Path    string
	Name    string    // series name
	Seq     int       // number in the series
	Start   time.Time // start time from the file name
	Size    int64
	ModTime time.Time // last written
}

// SegmentName is the file name of tape seq of series name started at
// start: NAME-000042-20261201T160700Z.jsonl.zst. Names sort in writing
// order (up to 999999 tapes, then by start time).
func SegmentName(name string, seq int, start time.Time) string {
	return fmt.Sprintf("%s-%06d-%s%s", name, seq, start.UTC().Format(segmentTimeLayout), Ext)
}

// ParseSegmentName splits a file name made by SegmentName; ok is false for
// any other name.
func ParseSegmentName(file string) (name string, seq int, start time.Time, ok bool) {
	rest, found := strings.CutSuffix(file, Ext)
	if !found || len(rest) < len("-000000-")+len(segmentTimeLayout)+1 {
		return "", 0, time.Time{}, false
	}
	ts := rest[len(rest)-len(segmentTimeLayout):]
	rest = rest[:len(rest)-len(segmentTimeLayout)]
	if !strings.HasSuffix(rest, "-") {
		return "", 0, time.Time{}, false
	}
	rest = rest[:len(rest)-1]
	i := strings.LastIndexByte(rest, '-')
	if i < 1 || len(rest)-i-1 < 6 {
		return "", 0, time.Time{}, false
	}
	seq, err := strconv.Atoi(rest[i+1:])
	if err != nil || seq < 1 {
		return "", 0, time.Time{}, false
	}
	start, err = time.Parse(segmentTimeLayout, ts)
	if err != nil {
		return "", 0, time.Time{}, false
	}
	return rest[:i], seq, start, true
}

// ListSeries lists the tapes of series name in dir (every series when
// name is ""), in name order, then number order.
func ListSeries(dir, name string) ([]SegmentFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tape: %w", err)
	}
	var segs []SegmentFile
	for _, e := range ents {
		n, seq, start, ok := ParseSegmentName(e.Name())
		if !ok || e.IsDir() || (name != "" && n != name) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		segs = append(segs, SegmentFile{Path: filepath.Join(dir, e.Name()), Name: n, Seq: seq, Start: start,
			Size: fi.Size(), ModTime: fi.ModTime()})
	}
	sort.Slice(segs, func(i, j int) bool {
		if segs[i].Name != segs[j].Name {
			return segs[i].Name < segs[j].Name
		}
		return segs[i].Seq < segs[j].Seq
	})
	return segs, nil
}

// Retain returns the tapes of one series (in number order) that retention
// deletes: those last written more than keep before now (keep > 0), then
// the oldest while the series holds more than keepSize bytes (keepSize >
// 0). The open tape (path open) and the newest tape are never returned.
func Retain(segs []SegmentFile, open string, keep time.Duration, keepSize int64, now time.Time) []SegmentFile {
	var total int64
	for _, s := range segs {
		total += s.Size
	}
	var del []SegmentFile
	for i, s := range segs {
		if s.Path == open || i == len(segs)-1 {
			continue
		}
		if (keep > 0 && now.Sub(s.ModTime) > keep) || (keepSize > 0 && total > keepSize) {
			del = append(del, s)
			total -= s.Size
		}
	}
	return del
}
