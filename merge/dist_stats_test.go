package merge

import (
	"sync"
	"testing"
)

// TestCountingTransport_CountsEveryMessageByKindAndGathersToProcess0: each
// message's bytes are counted once on the sender and once on the receiver,
// under the kind of its tag, and GatherStats hands process 0 every
// worker's counts, peak RSS and CPU time unchanged.
func TestCountingTransport_CountsEveryMessageByKindAndGathersToProcess0(t *testing.T) {
	const k = 3
	msgs := []struct {
		from, to, tag, n, kind int
	}{
		{1, 0, distTag, 4096, KindShipped},
		{2, 0, tagStream, 100, KindStream},
		{1, 2, tagData, 700, KindData},
		{2, 0, tagRes, 50, KindRecords},
		{1, 0, tagP2PRes, 30, KindP2PRecords},
		{2, 0, tagWorstRes, 20, KindWorst},
		{0, 1, tagAck0, 16, KindControl},
	}
	raw := newChanNet(k)
	ct := make([]*CountingTransport, k)
	for i := range ct {
		ct[i] = &CountingTransport{T: raw[i]}
	}
	var wantSent, wantRecv [k][NumKinds]int64
	for _, m := range msgs {
		b := make([]byte, m.n)
		if err := ct[m.from].Send(m.to, m.tag, b); err != nil {
			t.Fatal(err)
		}
		if err := ct[m.to].Recv(m.from, m.tag, b); err != nil {
			t.Fatal(err)
		}
		wantSent[m.from][m.kind] += int64(m.n)
		wantRecv[m.to][m.kind] += int64(m.n)
	}
	var got [k]ProcStats
	for p := range ct {
		got[p].Sent, got[p].Recv = ct[p].Counts()
		got[p].MaxRSSkB = int64(1000 + p)
		got[p].UserMs, got[p].SysMs = int64(2500+p), int64(30+p)
		if got[p].Sent != wantSent[p] || got[p].Recv != wantRecv[p] {
			t.Errorf("process %d: sent %v received %v, want %v and %v", p, got[p].Sent, got[p].Recv, wantSent[p], wantRecv[p])
		}
	}
	if r := got[0].RecvTotal(); r != 4096+100+50+30+20 {
		t.Errorf("process 0 received %d bytes in all, want %d", r, 4096+100+50+30+20)
	}
	var wg sync.WaitGroup
	for p := 1; p < k; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			if _, err := GatherStats(raw[p], p, k, got[p]); err != nil {
				t.Error(err)
			}
		}(p)
	}
	all, err := GatherStats(raw[0], 0, k, got[0])
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for p := range all {
		want := got[p]
		want.Proc = p
		if all[p] != want {
			t.Errorf("gathered %+v for process %d, want %+v", all[p], p, want)
		}
	}
	if s := all[1].String(); s != "process 1: received 16 bytes, sent 4826 bytes, peak RSS 1001 kB, CPU 2.50 s user, 0.03 s system (received: control 16)" {
		t.Errorf("line %q", s)
	}
}
