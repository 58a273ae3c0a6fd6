package main

import (
	"bufio"
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
)

// writeJSON writes v to the file name of the output directory as
// json.MarshalIndent(v, "", "  ") followed by a newline, byte for byte,
// without holding the whole text: structs and slices are encoded a field
// and an element at a time (encodeStream) into an indenter that writes
// the indented text as it goes. At 16,384 ranks imbalance.json is ≈ 33 MB;
// MarshalIndent held the compact text twice and the indented text (made
// for twice the compact size), process 0's largest allocations at its
// peak (D77).
func (o *outputs) writeJSON(name string, v any) error {
	f, err := os.OpenFile(filepath.Join(o.dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644) // as writeFile
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	in := &indenter{w: w, indent: "  "}
	err = encodeStream(in, reflect.ValueOf(v))
	if err == nil {
		in.Write([]byte{'\n'})
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

// encodeStream writes v's compact JSON encoding, as encoding/json makes
// it, to in: a struct field by field and a slice element by element, so
// that only one field's or element's encoding is held at a time; any
// other value, and any type whose encoding this cannot be sure to repeat
// (a type with its own MarshalJSON or MarshalText, embedded fields, tag
// options other than omitempty, byte slices), is encoded whole by
// json.Encoder. An addressable value is encoded through its address, as
// encoding/json does (a pointer method's MarshalJSON counts).
func encodeStream(in *indenter, v reflect.Value) error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() || ownEncoding(v.Type()) {
			return encodeWhole(in, v)
		}
		v = v.Elem()
	}
	if ownEncoding(v.Type()) {
		return encodeWhole(in, v)
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() || scalarKind(v.Type().Elem().Kind()) {
			// byte slices (base64) and slices of numbers, booleans or
			// strings at once: their text is no more than the slice's
			// data, and an encoder for each element was most of the
			// time of imbalance.json at 16,384 ranks (its instances'
			// per-member arrays)
			return encodeWhole(in, v)
		}
		in.Write([]byte{'['})
		for i := range v.Len() {
			if i > 0 {
				in.Write([]byte{','})
			}
			if err := encodeStream(in, v.Index(i)); err != nil {
				return err
			}
		}
		in.Write([]byte{']'})
		return nil
	case reflect.Struct:
		info := typeInfo(v.Type())
		fields, ok := info.fields, info.fieldsOK
		if !ok {
			return encodeWhole(in, v)
		}
		in.Write([]byte{'{'})
		first := true
		for _, f := range fields {
			fv := v.Field(f.index)
			if f.omitEmpty && emptyValue(fv) {
				continue
			}
			if !first {
				in.Write([]byte{','})
			}
			first = false
			in.Write(f.key)
			if err := encodeStream(in, fv); err != nil {
				return err
			}
		}
		in.Write([]byte{'}'})
		return nil
	}
	return encodeWhole(in, v)
}

// encodeWhole writes v's compact encoding by json.Encoder, without the
// newline the encoder ends it with.
func encodeWhole(in *indenter, v reflect.Value) error {
	var x any
	switch {
	case !v.IsValid():
		x = nil
	case v.CanAddr():
		x = v.Addr().Interface()
	default:
		x = v.Interface()
	}
	return json.NewEncoder(noNewline{in}).Encode(x)
}

// noNewline passes on what json.Encoder writes but the newline that
// ends each of its values.
type noNewline struct{ in *indenter }

func (w noNewline) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	w.in.Write(p)
	return n, nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// scalarKind reports whether values of kind k are numbers, booleans or
// strings, which encoding/json writes without looking inside.
func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// ownEncoding reports whether t or *t encodes itself (MarshalJSON,
// MarshalText): encoding/json calls those, so they are left to it.
// The answer is kept per type (typeInfo), as it is asked for every
// element of a slice (16,384 rank rows in imbalance.json).
func ownEncoding(t reflect.Type) bool { return typeInfo(t).own }

// typeEncoding is what encodeStream needs to know of a type, found once
// per type: whether it encodes itself and, for a struct, its fields
// (streamFields).
type typeEncoding struct {
	own      bool
	fields   []streamField
	fieldsOK bool
}

var typeEncodings sync.Map // reflect.Type -> *typeEncoding

// typeInfo returns t's typeEncoding, found at its first use.
func typeInfo(t reflect.Type) *typeEncoding {
	if e, ok := typeEncodings.Load(t); ok {
		return e.(*typeEncoding)
	}
	pt := reflect.PointerTo(t)
	e := &typeEncoding{own: t.Implements(jsonMarshaler) || t.Implements(textMarshaler) || pt.Implements(jsonMarshaler) || pt.Implements(textMarshaler)}
	if t.Kind() == reflect.Struct {
		e.fields, e.fieldsOK = streamFields(t)
	}
	got, _ := typeEncodings.LoadOrStore(t, e)
	return got.(*typeEncoding)
}

// streamField is a struct field as encoding/json writes it: its key
// (`"name":`, compact) and whether an empty value is left out.
type streamField struct {
	index     int
	key       []byte
	omitEmpty bool
}

// streamFields lists t's fields as encoding/json encodes them, in order;
// false for a struct whose encoding has more rules than these (embedded
// fields, tag options but omitempty, names encoding/json would not take
// from the tag).
func streamFields(t reflect.Type) ([]streamField, bool) {
	var out []streamField
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omit := false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omit = true
			default:
				return nil, false
			}
		}
		if name == "" {
			name = sf.Name
		}
		for _, c := range name {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return nil, false
			}
		}
		out = append(out, streamField{index: i, key: []byte(`"` + name + `":`), omitEmpty: omit})
	}
	return out, true
}

// emptyValue is encoding/json's "empty" for omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
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
