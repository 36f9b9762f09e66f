package rt

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

func TestRT(t *testing.T) {
	files, _ := filepath.Glob("/work/shared/testdata/dsh/cases/*/session.jsonl")
	ok, torn, bad := 0, 0, 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		s := codec.NewScanner(bytes.NewReader(data), codec.Limits{})
		h, err := s.Header()
		if err != nil {
			bad++
			t.Logf("%s: header: %v", filepath.Base(filepath.Dir(f)), err)
			continue
		}
		out, _ := h.AppendJSON(nil)
		out = append(out, '\n')
		var ferr error
		for {
			ev, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				ferr = err
				break
			}
			out, _ = ev.AppendJSON(out)
			out = append(out, '\n')
		}
		if ferr != nil {
			bad++
			t.Logf("%s: %v", filepath.Base(filepath.Dir(f)), ferr)
			continue
		}
		if s.Torn().FirstLine != 0 {
			torn++
			continue
		}
		if !bytes.Equal(out, data) {
			t.Errorf("%s: round trip differs", f)
			continue
		}
		ok++
	}
	t.Logf("ok %d torn %d bad %d", ok, torn, bad)
}
