package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// TestWriteJSON_IsMarshalIndentByteForByte: the streamed indentation
// writes what json.MarshalIndent(v, "", "  ") and a newline wrote, for
// values with every kind of JSON token, punctuation and escapes inside
// strings, empty and nested objects and arrays, and a whole analysis.
func TestWriteJSON_IsMarshalIndentByteForByte(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	gen(t, dir, synth.Config{Ranks: 4, Steps: 200, Seed: 9})
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	res, err := merge.Analyze(run, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p2pDir := filepath.Join(t.TempDir(), "halo")
	gen(t, p2pDir, synth.Config{Ranks: 6, Steps: 120, Seed: 4, Halo: true, HaloMix: true})
	hrun, err := rundir.Load(p2pDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hrun.Close()
	p2p, err := merge.AnalyzeP2P(hrun, merge.P2POptions{})
	if err != nil {
		t.Fatal(err)
	}
	type embedded struct{ X int }
	type withEmbedded struct {
		embedded
		Y int `json:"y"`
	}
	type odd struct {
		Skip   int            `json:"-"`
		Dash   int            `json:"-,"`
		Str    int            `json:"str,string"`
		Zero   int            `json:"zero,omitzero"`
		hidden int            //nolint:unused // unexported: never encoded
		Bytes  []byte         `json:"bytes"`
		Iface  any            `json:"iface"`
		Arr    [2]float64     `json:"arr"`
		PM     []pointerMarsh `json:"pm"`
		VM     valueText      `json:"vm"`
		Nil    []int          `json:"nil"`
		NilP   *odd           `json:"nilp"`
		Empty  string         `json:"empty,omitempty"`
		NoTag  int
		Opt    *int `json:",omitempty"`
	}
	seven := 7
	type inner struct {
		A []int           `json:"a"`
		M map[string]any  `json:"m"`
		E struct{}        `json:"e"`
		P *inner          `json:"p,omitempty"`
		S []string        `json:"s"`
		N map[string]bool `json:"n"`
	}
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"scalar", 3.25},
		{"string with punctuation", `a{b}[c],d:e "f" \g`},
		{"escapes and HTML", "tab\tnl\n<&>\u2028 \\\"x\\"},
		{"empty", []any{map[string]int{}, []int{}, "", nil}},
		{"nested", inner{A: []int{1, 2}, M: map[string]any{"k,:": []any{}, "{": map[string]any{"x": nil}}, S: []string{"]", "[", ""},
			P: &inner{A: []int{}, N: map[string]bool{"t": true}}}},
		{"analysis", res.Analysis},
		{"analysis by value", *res.Analysis},
		{"point-to-point", p2p},
		{"embedded falls back", &withEmbedded{embedded{1}, 2}},
		{"every field rule", &odd{Skip: 1, Dash: 2, Str: 3, hidden: 4, Bytes: []byte("<b>"), Iface: map[string]any{"z": []int{1}, "a": "x"},
			PM: []pointerMarsh{{1}, {2}}, VM: valueText{"t&"}, Opt: &seven}},
		{"every field rule by value", odd{Iface: &inner{A: []int{5}}, PM: []pointerMarsh{}}},
		{"pointer methods by value", []pointerMarsh{{3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.MarshalIndent(tc.v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			o := &outputs{dir: t.TempDir()}
			if err := o.writeJSON("x.json", tc.v); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(o.dir, "x.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("differs from MarshalIndent at byte %d of %d/%d: got %q, want %q", i, len(got), len(want),
					got[max(0, i-20):min(len(got), i+20)], want[max(0, i-20):min(len(want), i+20)])
			}
		})
	}
}

// TestIndenter_UnbalancedInputIsAnErrorAndPiecesAreOneText: input
// that is not whole JSON is reported, not written as if it were; and the
// indenter's output does not depend on how its input is cut into writes.
func TestIndenter_UnbalancedInputIsAnErrorAndPiecesAreOneText(t *testing.T) {
	for _, src := range []string{`{"a":1`, `[1,2`, `"open`, `{`, `[{}`} {
		var buf bytes.Buffer
		in := &indenter{w: bufio.NewWriter(&buf), indent: "  "}
		in.Write([]byte(src))
		if err := in.end(); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
	src := []byte(`{"a":[1,{"b\\\"":"x,y"},[]],"c":{},"d":"q\"[{"}` + "\n")
	var whole bytes.Buffer
	in := &indenter{w: bufio.NewWriter(&whole), indent: "  "}
	in.Write(src)
	in.w.Flush()
	if err := in.end(); err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, src, "", "  "); err != nil || !bytes.Equal(whole.Bytes(), want.Bytes()) {
		t.Fatalf("%q indented to %q, json.Indent gives %q (%v)", src, whole.Bytes(), want.Bytes(), err)
	}
	for cut := 1; cut < len(src); cut++ {
		var buf bytes.Buffer
		in := &indenter{w: bufio.NewWriter(&buf), indent: "  "}
		in.Write(src[:cut])
		in.Write(src[cut:])
		in.w.Flush()
		if err := in.end(); err != nil || !bytes.Equal(buf.Bytes(), whole.Bytes()) {
			t.Errorf("cut at %d: %q (%v), want %q", cut, buf.Bytes(), err, whole.Bytes())
		}
	}
}

// pointerMarsh encodes itself by a pointer method: encoding/json calls
// it only where the value is addressable.
type pointerMarsh struct{ N int }

func (p *pointerMarsh) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`{"n<":%d}`, p.N)), nil
}

// valueText encodes itself as text by a value method.
type valueText struct{ s string }

func (v valueText) MarshalText() ([]byte, error) { return []byte("text:" + v.s), nil }
