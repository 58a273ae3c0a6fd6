package viz

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

var exportEvents = []datamodel.GEvent{
	{Rank: 0, Op: trace.OpAllreduce, CommID: 7, Seq: 3, Root: -1, Sent: 8, Recv: 8, LocalEnter: 1000, LocalExit: 2500,
		Enter: 1500, Exit: 4000.5, Callsite: 0x401a2b},
	{Rank: 1, Op: trace.OpBcast, CommID: 7, Seq: 4, Root: 0, Sent: 0, Recv: 1 << 20, LocalEnter: 99, LocalExit: 1234567,
		Enter: 1234567.891, Exit: 2234567.891, Callsite: 0xdead},
}

func TestCSV_ColumnsAndValues(t *testing.T) {
	for _, c := range []struct {
		name     string
		resolve  func(uint64) string
		callsite []string
	}{
		{"addresses without resolver", nil, []string{"0x401a2b", "0xdead"}},
		{"resolved names, hostile ones quoted", func(pc uint64) string {
			if pc == 0xdead {
				return ""
			}
			return `solve, "x" at a.c:12`
		}, []string{`solve, "x" at a.c:12`, "0xdead"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewCSV(&b, c.resolve)
			for i := range exportEvents {
				if err := w.Add(&exportEvents[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatalf("CSV does not parse: %v", err)
			}
			if got := strings.Join(recs[0], ","); got != "rank,op,comm,seq,root,bytes_sent,bytes_recv,local_enter_ns,local_exit_ns,global_enter_ns,global_exit_ns,callsite,enter_err_ns,exit_err_ns" {
				t.Fatalf("header %q", got)
			}
			if len(recs) != 1+len(exportEvents) {
				t.Fatalf("%d records", len(recs))
			}
			for i, ev := range exportEvents {
				r := recs[i+1]
				want := []string{strconv.Itoa(int(ev.Rank)), ev.Op.String(), strconv.FormatUint(ev.CommID, 10), strconv.Itoa(int(ev.Seq)),
					strconv.Itoa(int(ev.Root)), strconv.FormatUint(ev.Sent, 10), strconv.FormatUint(ev.Recv, 10),
					strconv.FormatInt(ev.LocalEnter, 10), strconv.FormatInt(ev.LocalExit, 10)}
				for j, w := range want {
					if r[j] != w {
						t.Errorf("row %d col %d = %q, want %q", i, j, r[j], w)
					}
				}
				ge, _ := strconv.ParseFloat(r[9], 64)
				gx, _ := strconv.ParseFloat(r[10], 64)
				if ge != ev.Enter || gx != ev.Exit {
					t.Errorf("row %d global times %v %v, want exact %v %v", i, ge, gx, ev.Enter, ev.Exit)
				}
				if r[11] != c.callsite[i] {
					t.Errorf("row %d callsite %q, want %q", i, r[11], c.callsite[i])
				}
			}
		})
	}
}

func TestCSV_EmptyStreamHasHeader(t *testing.T) {
	var b bytes.Buffer
	if err := NewCSV(&b, nil).Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "rank,op,") {
		t.Fatalf("got %q", b.String())
	}
}

type chromeTrace struct {
	DisplayTimeUnit string `json:"displayTimeUnit"`
	TraceEvents     []struct {
		Ph   string         `json:"ph"`
		Name string         `json:"name"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

func TestPerfetto_TimestampsInMicroseconds(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   []PerfettoOption
		ts     []float64
		dur    []float64
		origin float64
	}{
		{"absolute", nil, []float64{1.5, 1234.568}, []float64{2.501, 1000}, 0},
		{"origin subtracted", []PerfettoOption{PerfettoOrigin(1000)}, []float64{0.5, 1233.568}, []float64{2.501, 1000}, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			ranks := []RankMeta{{Rank: 0, Host: hostile, PID: 42}, {Rank: 1, Host: "n1"}}
			p := NewPerfetto(&b, ranks, append(c.opts, PerfettoResolve(func(pc uint64) string { return "fn" + hostile }))...)
			for i := range exportEvents {
				if err := p.Add(&exportEvents[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			var tr chromeTrace
			if err := json.Unmarshal(b.Bytes(), &tr); err != nil {
				t.Fatalf("trace.json does not parse: %v\n%s", err, b.String())
			}
			var names []string
			var xs int
			for _, e := range tr.TraceEvents {
				switch e.Ph {
				case "M":
					if e.Name == "process_name" {
						names = append(names, e.Args["name"].(string))
					}
				case "X":
					ev := exportEvents[xs]
					if e.Pid != int(ev.Rank) || e.Name != ev.Op.String() {
						t.Errorf("event %d: pid %d name %q", xs, e.Pid, e.Name)
					}
					if math.Abs(e.Ts-c.ts[xs]) > 1e-9 || math.Abs(e.Dur-c.dur[xs]) > 1e-9 {
						t.Errorf("event %d: ts %v dur %v µs, want %v %v", xs, e.Ts, e.Dur, c.ts[xs], c.dur[xs])
					}
					if e.Args["comm"].(float64) != float64(ev.CommID) || e.Args["seq"].(float64) != float64(ev.Seq) ||
						e.Args["callsite"].(string) != "fn"+hostile || e.Args["bytes_recv"].(float64) != float64(ev.Recv) {
						t.Errorf("event %d args %v", xs, e.Args)
					}
					xs++
				}
			}
			if xs != len(exportEvents) {
				t.Errorf("%d X events, want %d", xs, len(exportEvents))
			}
			if len(names) != 2 || names[0] != "rank 0 ("+hostile+") pid 42" || names[1] != "rank 1 (n1)" {
				t.Errorf("process names %q", names)
			}
		})
	}
}

// TestPerfetto_Streams: events reach the writer before Close, so nothing
// but a small buffer is held.
func TestPerfetto_Streams(t *testing.T) {
	var b bytes.Buffer
	p := NewPerfetto(&b, nil)
	ev := exportEvents[0]
	for i := 0; i < 5000; i++ {
		ev.Seq = uint32(i)
		if err := p.Add(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() < 100_000 {
		t.Fatalf("only %d bytes written before Close: events are being held", b.Len())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(&ev); err == nil {
		t.Error("Add after Close succeeded")
	}
	var tr chromeTrace
	if err := json.Unmarshal(b.Bytes(), &tr); err != nil || len(tr.TraceEvents) != 5000 {
		t.Fatalf("parse: %v, %d events", err, len(tr.TraceEvents))
	}
}

func TestPerfetto_EmptyTraceIsValidJSON(t *testing.T) {
	var b bytes.Buffer
	if err := NewPerfetto(&b, nil).Close(); err != nil {
		t.Fatal(err)
	}
	var tr chromeTrace
	if err := json.Unmarshal(b.Bytes(), &tr); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
}
