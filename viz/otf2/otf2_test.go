package otf2

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// twoRanks is a small run with every kind of record the exporter writes.
func twoRanks() ([]datamodel.GEvent, RunInfo) {
	ev := []datamodel.GEvent{
		{Rank: 0, Op: trace.OpAllreduce, CommID: 1, Seq: 0, Root: -1, Sent: 8, Recv: 8, Enter: 100, Exit: 200},
		{Rank: 1, Op: trace.OpAllreduce, CommID: 1, Seq: 0, Root: -1, Sent: 8, Recv: 8, Enter: 150, Exit: 201},
		{Rank: 1, Op: trace.OpIrecv, CommID: 1, Root: -1, Peer: trace.PeerAny, Tag: trace.TagAny, Req: 1, Enter: 290, Exit: 295, LocalEnter: 290},
		{Rank: 1, Op: trace.OpWaitall, CommID: 1, Root: -1, Peer: 0, Tag: 5, Recv: 512, Req: 1, Enter: 296, Exit: 420, LocalEnter: 296},
		{Rank: 0, Op: trace.OpIsend, CommID: 1, Root: -1, Peer: 1, Tag: 5, Sent: 512, Req: 1, Enter: 300, Exit: 310, LocalEnter: 300},
		{Rank: 0, Op: trace.OpWaitall, CommID: 1, Root: -1, Peer: 1, Tag: 5, Sent: 512, Req: 1, Enter: 320, Exit: 400, LocalEnter: 320},
		{Rank: 0, Op: trace.OpSend, CommID: 1, Root: -1, Peer: 1, Tag: 6, Sent: 64, Enter: 500, Exit: 520, LocalEnter: 500},
		{Rank: 1, Op: trace.OpRecv, CommID: 1, Root: -1, Peer: 0, Tag: 6, Recv: 64, Enter: 505, Exit: 530, LocalEnter: 505},
		{Rank: 0, Op: trace.OpBcast, CommID: 3, Seq: 0, Root: 0, Sent: 16, Enter: 600, Exit: 610},
		{Rank: 1, Op: trace.OpBcast, CommID: 3, Seq: 0, Root: 0, Recv: 16, Enter: 601, Exit: 640},
	}
	info := RunInfo{
		Ranks:  []Rank{{Rank: 0, Host: "n0"}, {Rank: 1, Host: "n1"}},
		Comms:  []Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: []int32{0, 1}}, {ID: 3, Name: "split", Members: []int32{1, 0}, Parent: 1}},
		Origin: 1_000_000,
	}
	return ev, info
}

// TestOTF2_EveryEventReadBackByOtf2Print writes the run and reads it back
// with otf2-print (Debian's otf2-tools, the reference reader): every record
// is there, with the corrected times, comm ranks, tags, bytes and requests.
func TestOTF2_EveryEventReadBackByOtf2Print(t *testing.T) {
	if !Available() {
		t.Fatalf("%v", ErrNotBuilt)
	}
	printer, err := exec.LookPath("otf2-print")
	if err != nil {
		t.Fatalf("otf2-print not found (Debian package otf2-tools; scripts/setup.sh installs it for make test): %v", err)
	}
	evs, info := twoRanks()
	dir := t.TempDir()
	w, err := Create(dir, "traces", info)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(printer, filepath.Join(dir, "traces.otf2")).CombinedOutput()
	if err != nil {
		t.Fatalf("otf2-print: %v\n%s", err, out)
	}
	text := string(out)
	count := func(kind string) int { return len(regexp.MustCompile(`(?m)^`+kind+`\s`).FindAllString(text, -1)) }
	for kind, want := range map[string]int{
		"ENTER": 10, "LEAVE": 10, "MPI_COLLECTIVE_BEGIN": 4, "MPI_COLLECTIVE_END": 4,
		"MPI_SEND": 1, "MPI_RECV": 1, "MPI_ISEND": 1, "MPI_ISEND_COMPLETE": 1, "MPI_IRECV_REQUEST": 1, "MPI_IRECV": 1,
	} {
		if got := count(kind); got != want {
			t.Errorf("%s: %d records, want %d\n%s", kind, got, want, text)
		}
	}
	for _, want := range []*regexp.Regexp{
		// corrected times: origin + global time
		regexp.MustCompile(`(?m)^ENTER\s+0\s+1000100\s+Region: "MPI_Allreduce"`),
		regexp.MustCompile(`(?m)^MPI_SEND\s+0\s+1000500\s+Receiver: 1 \("Master thread" <1>\), Communicator: "MPI_COMM_WORLD" <0>, Tag: 6, Length: 64`),
		regexp.MustCompile(`(?m)^MPI_IRECV\s+1\s+1000420\s+Sender: 0 .*Tag: 5, Length: 512, Request: 1`),
		// gclock's root is a comm rank: comm 3 lists world rank 1 first,
		// so root 0 is location 1
		regexp.MustCompile(`(?m)^MPI_COLLECTIVE_END\s+0\s+1000610\s+Operation: BCAST, Communicator: "split" <1>, Root: 0 \("Master thread" <1>\), Sent: 16, Received: 0`),
	} {
		if !want.MatchString(text) {
			t.Errorf("otf2-print output lacks %s\n%s", want, text)
		}
	}
	if !strings.Contains(text, "MPI_Allreduce") {
		t.Errorf("no region names")
	}
}
