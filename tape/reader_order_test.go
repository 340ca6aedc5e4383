package tape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/jsonrpc"
)

// TestReaderTimeOrder: a tape without time_ordered in its header (written
// before the Writer kept time order) is read in time order by every read
// method, records of equal times in file order, a cut tail counted right;
// a tape whose header says time_ordered is read in file order, as written.
func TestReaderTimeOrder(t *testing.T) {
	times := []int64{10, 30, 20, 25, 20, 15}
	var lines []string
	for i, tm := range times {
		lines = append(lines, fmt.Sprintf(`{"type":"message","time":%d,"dir":"c2s","frame":{"jsonrpc":"2.0","id":%d,"method":"m"}}`, tm, i))
	}
	text := func(header string) []byte {
		var b bytes.Buffer
		b.WriteString(header + "\n")
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		b.WriteString(`{"type":"message","time":1,"fr`) // a cut last line
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		return enc.EncodeAll(b.Bytes(), nil)
	}
	inFileOrder := []int{0, 1, 2, 3, 4, 5}
	reads := map[string]func(r *Reader) (*Record, error){
		"Next": (*Reader).Next,
		"NextShared": func(r *Reader) (*Record, error) {
			var rec Record
			return &rec, r.NextShared(&rec)
		},
		"NextClassifiedMembers": func(r *Reader) (*Record, error) {
			var rec Record
			var info jsonrpc.Info
			_, err := r.NextClassifiedMembers(&rec, &info, nil)
			if err == nil && info.Kind != jsonrpc.KindRequest {
				return nil, fmt.Errorf("classified as %v", info.Kind)
			}
			return &rec, err
		},
	}
	for _, tc := range []struct {
		name   string
		header string
		ahead  bool
		want   []int // ids, in the order read
	}{
		{name: "old tape", header: `{"type":"header","format":1}`, want: []int{0, 5, 2, 4, 3, 1}},
		{name: "old tape, decoded ahead", header: `{"type":"header","format":1}`, ahead: true, want: []int{0, 5, 2, 4, 3, 1}},
		{name: "time_ordered tape", header: `{"type":"header","format":1,"time_ordered":true}`, want: inFileOrder},
	} {
		for name, read := range reads {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				r, err := NewReader(bytes.NewReader(text(tc.header)))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if tc.ahead {
					if err := r.DecodeAhead(2); err != nil {
						t.Fatal(err)
					}
				}
				var got []int
				for {
					rec, err := read(r)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					var id int
					if _, err := fmt.Sscanf(string(rec.Frame), `{"jsonrpc":"2.0","id":%d`, &id); err != nil {
						t.Fatalf("frame %q: %v", rec.Frame, err)
					}
					got = append(got, id)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("read ids %v, want %v", got, tc.want)
				}
				var te *TailError
				if !errors.As(r.Warning(), &te) || te.Records != int64(len(times)) || r.Records() != int64(len(times)) {
					t.Errorf("warning %v, %d records; want a cut tail after %d", r.Warning(), r.Records(), len(times))
				}
			})
		}
	}
}
