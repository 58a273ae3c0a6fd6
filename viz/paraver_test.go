package viz

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// TestParaver_ThreeFilesInTimeOrder writes a 4-rank run on 2 interleaved
// hosts through several sorted runs and checks the .prv against the input:
// the header, every record in time order, a state and two events per call,
// a running state between calls, the messages as communications with
// Paraver's CPU numbering (ranks grouped by host, as in the .row).
func TestParaver_ThreeFilesInTimeOrder(t *testing.T) {
	old := prvRunLines
	prvRunLines = 7 // force an external merge of many runs
	defer func() { prvRunLines = old }()
	ranks := []RankMeta{{Rank: 0, Host: "a"}, {Rank: 1, Host: "b"}, {Rank: 2, Host: "a"}, {Rank: 3, Host: "b"}}
	dir := t.TempDir()
	p, err := NewParaver(dir, "run", ranks)
	if err != nil {
		t.Fatal(err)
	}
	var evs []datamodel.GEvent
	for step := 0; step < 20; step++ {
		for r := int32(0); r < 4; r++ {
			base := float64(1000 + step*1000 + int(r)*37)
			evs = append(evs, datamodel.GEvent{Rank: r, Op: trace.OpAllreduce, CommID: 1, Seq: uint32(step), Root: -1, Sent: 8, Recv: 8,
				Enter: base, Exit: float64(1000+step*1000) + 400})
		}
	}
	// ordered by entry, as the merge delivers them
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].Enter < evs[j-1].Enter; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	for i := range evs {
		if err := p.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	msgs := []datamodel.Message{{Src: 1, Dst: 2, Tag: 4, Bytes: 512, SendStart: 1500, SendExit: 1510, RecvEnter: 1600, RecvExit: 1700}}
	p.AddMessages(msgs)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.prv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	hdr := regexp.MustCompile(`^#Paraver \(\d\d/\d\d/\d\d at \d\d:\d\d\):(\d+)_ns:2\(2,2\):1:4\(1:1,1:2,1:1,1:2\)$`)
	m := hdr.FindStringSubmatch(lines[0])
	if m == nil {
		t.Fatalf("header %q", lines[0])
	}
	if end, _ := strconv.ParseInt(m[1], 10, 64); end != 20*1000+400-1000 {
		t.Errorf("trace end %d ns, want %d", end, 20*1000+400-1000)
	}
	count := map[string]int{}
	var last int64 = -1
	for _, l := range lines[1:] {
		f := strings.Split(l, ":")
		ts, err := strconv.ParseInt(f[5], 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if ts < last {
			t.Fatalf("line %q at %d after %d: not in time order", l, ts, last)
		}
		last = ts
		count[f[0]]++
		if f[0] == "1" && f[7] == strconv.Itoa(prvGroupComm) {
			count["coll-state"]++
		}
		if f[0] == "1" && f[7] == strconv.Itoa(prvRunning) {
			count["running"]++
		}
		if f[0] == "3" {
			// rank 1 is the first CPU of host b (CPU 3), rank 2 the second of a (CPU 2)
			if want := "3:3:1:2:1:500:510:2:1:3:1:600:700:512:4"; l != want {
				t.Errorf("communication %q, want %q", l, want)
			}
		}
	}
	calls := len(evs)
	if count["coll-state"] != calls || count["2"] != 2*calls || count["3"] != 1 {
		t.Errorf("records: %v, want %d collective states, %d events, 1 communication", count, calls, 2*calls)
	}
	// every rank runs between its calls (19 gaps) and before the first (rank 0 starts at 0)
	if count["running"] != 4*19+3 {
		t.Errorf("%d running states, want %d", count["running"], 4*19+3)
	}
	pcf, _ := os.ReadFile(filepath.Join(dir, "run.pcf"))
	if !strings.Contains(string(pcf), fmt.Sprintf("%-6d MPI_Allreduce", int(trace.OpAllreduce))) || !strings.Contains(string(pcf), "50000002    MPI Collective Comm") {
		t.Errorf("run.pcf lacks the MPI_Allreduce value or the collective event type:\n%s", pcf)
	}
	row, _ := os.ReadFile(filepath.Join(dir, "run.row"))
	for _, want := range []string{"LEVEL CPU SIZE 4\n1.a\n2.a\n1.b\n2.b\n", "LEVEL NODE SIZE 2\na\nb\n", "LEVEL THREAD SIZE 4\nTHREAD 1.1.1 (rank 0)"} {
		if !strings.Contains(string(row), want) {
			t.Errorf("run.row lacks %q:\n%s", want, row)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".run.prv-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
