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
// without holding the indented text: the compact encoding is indented
// while it is written (indentTo). At 16,384 ranks imbalance.json is
// ≈ 33 MB and MarshalIndent's indented copy (made for twice the compact
// size) was process 0's largest allocation at its peak (D77).
func (o *outputs) writeJSON(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f, err := os.Create(filepath.Join(o.dir, name))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = indentTo(w, b, "  ")
	if err == nil {
		err = w.WriteByte('\n')
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

// indentTo writes the compact JSON src (as json.Marshal makes it: no
// white space outside strings) to w indented as json.Indent(dst, src, "",
// indent) does: a newline and the depth's indent after '{', '[' and ',',
// before a closing '}' or ']', ": " after a key, empty objects and arrays
// kept as {} and [], strings copied unchanged.
func indentTo(w *bufio.Writer, src []byte, indent string) error {
	depth := 0
	needIndent := false // an opened object or array whose first element decides its form
	inString, escaped := false, false
	newline := func(d int) {
		w.WriteByte('\n')
		for range d {
			w.WriteString(indent)
		}
	}
	for _, c := range src {
		if inString {
			w.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline(depth)
		}
		switch c {
		case '"':
			inString = true
			w.WriteByte(c)
		case '{', '[':
			needIndent = true
			w.WriteByte(c)
		case ',':
			w.WriteByte(c)
			newline(depth)
		case ':':
			w.WriteByte(c)
			w.WriteByte(' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				newline(depth)
			}
			w.WriteByte(c)
		default:
			w.WriteByte(c)
		}
	}
	if inString || depth != 0 || needIndent {
		return fmt.Errorf("indenting JSON: unbalanced input (%d bytes)", len(src))
	}
	return nil // a write error stays in w: its Flush returns it
}
