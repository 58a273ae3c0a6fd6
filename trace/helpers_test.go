package trace

import (
	"math/rand/v2"
)

// amgEvents returns n events following a regular AMG-like pattern: a
// repeating op sequence on two comms, enter gaps jittering by tens of ns and
// µs-scale durations jittering by a few hundred ns.
func amgEvents(n int, seed uint64) []Event {
	rng := rand.New(rand.NewPCG(seed, 7))
	type step struct {
		op         Op
		comm       uint32
		root       int32
		sent, recv uint64
		site       uint64
		gap        int64
		dur        int64
	}
	pattern := []step{
		{OpAllreduce, 0, -1, 8, 8, 0x401a20, 2100, 3400},
		{OpAllreduce, 0, -1, 8, 8, 0x401b44, 900, 3100},
		{OpAllreduce, 1, -1, 8, 8, 0x401c10, 15000, 2500},
		{OpBcast, 1, 0, 64, 64, 0x401d00, 400, 1800},
		{OpAllreduce, 0, -1, 8, 8, 0x401a20, 2200, 3300},
		{OpAllgather, 0, -1, 16, 128, 0x401e80, 1200, 5200},
		{OpAllreduce, 0, -1, 8, 8, 0x401b44, 800, 3000},
		{OpBarrier, 0, -1, 0, 0, 0x402000, 30000, 6000},
	}
	seq := map[uint32]uint32{}
	evs := make([]Event, n)
	t := int64(1_700_000_000_000_000_000)
	for i := range evs {
		s := pattern[i%len(pattern)]
		t += s.gap + rng.Int64N(64) - 32
		d := s.dur + rng.Int64N(512) - 256
		evs[i] = Event{Op: s.op, Comm: s.comm, Seq: seq[s.comm], Root: s.root, Sent: s.sent, Recv: s.recv,
			EnterNS: t, ExitNS: t + d, Callsite: s.site}
		seq[s.comm]++
		t += d
	}
	return evs
}

// randomEvents returns n events with every field random, including
// extreme values, for property tests.
func randomEvents(rng *rand.Rand, n int) []Event {
	evs := make([]Event, n)
	pick64 := func() int64 {
		switch rng.IntN(6) {
		case 0:
			return int64(rng.Uint64())
		case 1:
			return -1 << 63
		case 2:
			return 1<<63 - 1
		default:
			return rng.Int64N(1 << 40)
		}
	}
	for i := range evs {
		evs[i] = Event{
			Op:       Op(rng.IntN(0x10000)),
			Comm:     uint32(rng.IntN(4)) * uint32(rng.IntN(3)+1) << uint(rng.IntN(30)),
			Seq:      rng.Uint32(),
			Root:     int32(rng.Uint32()),
			Sent:     rng.Uint64() >> uint(rng.IntN(64)),
			Recv:     rng.Uint64() >> uint(rng.IntN(64)),
			EnterNS:  pick64(),
			ExitNS:   pick64(),
			Callsite: rng.Uint64() >> uint(rng.IntN(64)),
		}
		if rng.IntN(3) == 0 {
			evs[i].Peer = int32(rng.Uint32())
			evs[i].Tag = int32(rng.Uint32())
			evs[i].Req = rng.Uint32()
		}
	}
	return evs
}

func testHeader() Header {
	return Header{
		JobID: "job-42", Rank: 7, WorldSize: 16, Host: "node3", PID: 1234, Exe: "/usr/bin/amg",
		Args: []string{"amg", "-n", "10"}, MPILib: "Open MPI v4.1.4",
		Timer:  Timer{Name: "tsc", TSCHz: 2.5e9, CostNS: 10.5},
		NodeID: 1, NodeSize: 4,
		Inject:  &Injection{Spec: "off=1000,ppm=5", NodeSize: 4, OffsetNS: 1000, DriftPPM: 5},
		Objects: []Object{{Path: "/usr/bin/amg", Base: 0x400000, Lo: 0x401000, Hi: 0x480000, BuildID: "abcd"}},
		StartNS: 123456789,
		Config:  map[string]string{"GCLOCK_SYNC": "h2hca"},
	}
}

func testComms() []Comm {
	return []Comm{
		{ID: CommWorldID, Local: 0, Kind: "world", Members: []int32{0, 1, 2, 3}, CreatedNS: 10},
		{ID: CommID(CommWorldID, 0, 0), Local: 1, Parent: CommWorldID, Kind: "split", Members: []int32{0, 2}, CreatedNS: 20, FreedNS: 99},
	}
}

func testEpochs() []Epoch {
	return []Epoch{
		{Index: 0, Algorithm: "h2hca(hca3/skampi,clockprop)", Params: map[string]string{"nfit": "10"},
			StartNS: 100, EndNS: 200, Model: Model{T0: 100, Slope: 1e-6, Intercept: -55.5},
			Chain: []Model{{T0: 1, Slope: 2, Intercept: 3}}, FitPoints: 10, PingPongs: 20,
			Check: []CheckResult{{Rank: 1, AfterNS: 5, OffsetNS: 0.25}}},
		{Index: 1, Algorithm: "hca3", StartNS: 900, EndNS: 1000, Model: Model{T0: 900, Slope: -2e-7, Intercept: 12}},
	}
}
