package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// writeJSON writes v to the file name of the output directory as
// json.MarshalIndent(v, "", "  ") followed by a newline, byte for byte,
// holding only the compact encoding: json.Encoder hands it to an
// indenter that writes the indented text as it goes. At 16,384 ranks
// imbalance.json is ≈ 33 MB; MarshalIndent held a copy of the compact
// text and the indented text (made for twice the compact size) besides
// the encoder's buffer, process 0's largest allocations at its peak (D77).
func (o *outputs) writeJSON(name string, v any) error {
	f, err := os.Create(filepath.Join(o.dir, name))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	in := &indenter{w: w, indent: "  "}
	err = json.NewEncoder(in).Encode(v) // compact, then '\n'
	if err == nil {
		err = in.end()
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// indenter writes the compact JSON written to it (as json.Marshal and
// json.Encoder make it: no white space outside strings but the newline
// after a value) to w indented as json.Indent(dst, src, "", indent) does:
// a newline and the depth's indent after '{', '[' and ',' and before a
// closing '}' or ']', ": " after a key, empty objects and arrays kept as
// {} and [], strings copied unchanged. Its state carries from one Write
// to the next.
type indenter struct {
	w      *bufio.Writer
	indent string
	depth  int
	// needIndent: an object or array was opened and its first element
	// decides its form
	needIndent        bool
	inString, escaped bool
}

// Write implements io.Writer; a write error stays in w (its Flush
// returns it).
func (d *indenter) Write(src []byte) (int, error) {
	w := d.w
	newline := func() {
		w.WriteByte('\n')
		for range d.depth {
			w.WriteString(d.indent)
		}
	}
	for _, c := range src {
		if d.inString {
			w.WriteByte(c)
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		if c == '\n' && d.depth == 0 && !d.needIndent {
			w.WriteByte(c) // the newline after the value
			continue
		}
		if d.needIndent && c != '}' && c != ']' {
			d.needIndent = false
			d.depth++
			newline()
		}
		switch c {
		case '"':
			d.inString = true
			w.WriteByte(c)
		case '{', '[':
			d.needIndent = true
			w.WriteByte(c)
		case ',':
			w.WriteByte(c)
			newline()
		case ':':
			w.WriteByte(c)
			w.WriteByte(' ')
		case '}', ']':
			if d.needIndent {
				d.needIndent = false
			} else {
				d.depth--
				newline()
			}
			w.WriteByte(c)
		default:
			w.WriteByte(c)
		}
	}
	return len(src), nil
}

// end reports input that did not close every string, object and array.
func (d *indenter) end() error {
	if d.inString || d.depth != 0 || d.needIndent {
		return fmt.Errorf("indenting JSON: unbalanced input")
	}
	return nil
}
