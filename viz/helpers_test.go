package viz

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
)

// wellFormed decodes the whole document with encoding/xml and returns the
// root element name and all character data, so tests can look for text
// after unescaping.
func wellFormed(t testing.TB, doc []byte) (root string, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var sb strings.Builder
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line := d.InputPos
			l, c := line()
			t.Fatalf("not well-formed XML at line %d col %d: %v", l, c, err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if root != "" {
					t.Fatalf("second root element <%s>", v.Name.Local)
				}
				root = v.Name.Local
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			sb.Write(v)
			sb.WriteByte('\n')
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced document: depth %d at EOF", depth)
	}
	return root, sb.String()
}

// svgTexts returns the character data of every <text> element.
func svgTexts(t testing.TB, doc []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var out []string
	in := false
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if v.Name.Local == "text" {
				in = true
				cur.Reset()
			}
		case xml.EndElement:
			if v.Name.Local == "text" && in {
				out = append(out, cur.String())
				in = false
			}
		case xml.CharData:
			if in {
				cur.Write(v)
			}
		}
	}
	return out
}

// eventBytes returns the Sent/Recv the recorder writes (cshim/bytes.h) for
// comm rank r of a call of op moving blocks of b bytes on a communicator
// of 3 members (root: comm rank of the root).
func eventBytes(op trace.Op, r, root int32, b uint64) (sent, recv uint64) {
	const n = 3
	switch op {
	case trace.OpBarrier:
		return 0, 0
	case trace.OpBcast:
		if r == root {
			return b, 0
		}
		return 0, b
	case trace.OpReduce:
		if r == root {
			return b, b
		}
		return b, 0
	case trace.OpGather, trace.OpGatherv:
		if r == root {
			return b, n * b
		}
		return b, 0
	case trace.OpScatter, trace.OpScatterv:
		if r == root {
			return n * b, b
		}
		return 0, b
	case trace.OpExscan:
		if r == 0 {
			return b, 0
		}
		return b, b
	case trace.OpAllgather, trace.OpAllgatherv:
		return b, n * b
	case trace.OpAlltoall, trace.OpAlltoallv, trace.OpAlltoallw:
		return n * b, n * b
	case trace.OpReduceScatterBlock:
		return n * b, b
	}
	return b, b // Allreduce, Scan, Reduce_scatter
}
