package merge

// Parallel analysis across processes (tracemerge under mpirun, docs/
// tracemerge.md "Parallel tracemerge"): the per-rank work (reading,
// decompressing, decoding, correcting and ordering each rank file's
// events) runs on worker processes 1..K-1, each for its share of the rank
// files; process 0 pulls the corrected events rank by rank as its k-way
// merge needs them and runs the merge, matching, metrics and streaming
// analyses unchanged. Process 0 thus sees exactly the events, in exactly
// the order, of a serial run: the outputs are byte for byte the same.
//
// Wire protocol (every message is an 8-byte little-endian length, then
// that many bytes, process 0 <-> one worker, in order):
//
//	request  (0 -> w): int32 count, then count int32 world ranks;
//	                   count 0: stop serving
//	reply    (w -> 0): for every requested rank, in request order:
//	                   int32 rank, int32 n; n >= 0: n GEvents (their
//	                   in-memory layout: same binary on both sides);
//	                   n == -1: end of the rank's stream, then int32 len
//	                   and a JSON distEnd of that length

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// Transport moves byte messages between the processes of a parallel
// analysis (mpirt.World over MPI; channels in tests). Messages between two
// processes arrive in the order they were sent.
type Transport interface {
	Send(dest, tag int, b []byte) error
	Recv(src, tag int, b []byte) error
}

// distAheadFor is how many batches a worker's decoder runs ahead per
// rank, and the most one reply carries for a rank, in a run of n ranks:
// 8, fewer when n is large, so that process 0 holds at most about 256 MB
// of received events (two replies per rank) whatever the run.
func distAheadFor(n int) int {
	per := 2 * batchSize(n) * evSize * max(n, 1)
	return max(1, min(8, (256<<20)/per))
}

// distPerMsg bounds the ranks of one request (and so a reply's size:
// distPerMsg * distAheadFor(ranks) batches); distInflight is how many requests
// process 0 keeps outstanding per worker.
const (
	distPerMsg   = 32
	distInflight = 2
)

// distTag is the message tag of the protocol.
const distTag = 7131

// Dist is this process's part in a parallel analysis of K = Procs
// processes. Process 0 analyses (Pass.SetDist), the others serve
// (Pass.Serve).
type Dist struct {
	Procs int
	Me    int
	T     Transport

	mu      sync.Mutex
	reqs    chan distReq
	stopped bool
	stopErr error
	wg      sync.WaitGroup
	// Requests sent and ranks requested (process 0), for the benchmarks.
	Requests, RanksRequested int
}

// Owner returns the process that decodes the file at index i of n rank
// files (Run.Ranks order) among procs processes: with one process, 0;
// otherwise the workers 1..procs-1 take contiguous, equal (±1) blocks and
// process 0, which runs the merge and the analysis, decodes none.
func Owner(i, n, procs int) int {
	if procs <= 1 || n <= 0 {
		return 0
	}
	w := procs - 1
	return 1 + i*w/n
}

// distEnd ends one rank's stream: what the worker's decoder found.
type distEnd struct {
	Err      string   `json:"err,omitempty"`
	Unknown  int      `json:"unknown,omitempty"`
	Unsorted int      `json:"unsorted,omitempty"`
	BadTimes int      `json:"bad_times,omitempty"`
	Damage   []string `json:"damage,omitempty"`
}

type distReq struct {
	rank  int
	owner int
	reply chan distReply
}

type distReply struct {
	ev  []GEvent
	end *distEnd
	err error
}

var evSize = int(unsafe.Sizeof(GEvent{}))

func evBytes(ev []GEvent) []byte {
	if len(ev) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&ev[0])), len(ev)*evSize)
}

func sendMsg(t Transport, dest int, b []byte) error {
	var h [8]byte
	binary.LittleEndian.PutUint64(h[:], uint64(len(b)))
	if err := t.Send(dest, distTag, h[:]); err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	return t.Send(dest, distTag, b)
}

func recvMsg(t Transport, src int, buf []byte) ([]byte, error) {
	var h [8]byte
	if err := t.Recv(src, distTag, h[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(h[:])
	if n > 1<<30 {
		return nil, fmt.Errorf("parallel analysis: message of %d bytes from process %d", n, src)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if n == 0 {
		return buf, nil
	}
	return buf, t.Recv(src, distTag, buf)
}

// start runs process 0's dispatcher: it gathers the pending requests of
// the rank proxies, sends each worker one request per round and hands the
// replies out.
func (d *Dist) start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reqs != nil {
		return
	}
	d.reqs = make(chan distReq, 1024)
	d.wg.Add(1)
	go d.dispatch()
}

func (d *Dist) dispatch() {
	defer d.wg.Done()
	var buf []byte
	var failed error
	pending := map[int][]distReq{}    // by owner: not sent yet
	inflight := map[int][][]distReq{} // by owner: sent, reply due
	var owners []int                  // owners seen, in order
	add := func(r distReq) {
		if _, seen := pending[r.owner]; !seen {
			owners = append(owners, r.owner)
		}
		pending[r.owner] = append(pending[r.owner], r)
	}
	nflight := 0
	open := true
	next := 0
	for {
		if nflight == 0 {
			idle := true
			for _, o := range owners {
				if len(pending[o]) > 0 {
					idle = false
				}
			}
			if idle {
				if !open {
					return
				}
				r, ok := <-d.reqs
				if !ok {
					return
				}
				add(r)
			}
		}
	drain:
		for open {
			select {
			case r, ok := <-d.reqs:
				if !ok {
					open = false
					break drain
				}
				add(r)
			default:
				break drain
			}
		}
		// Send: up to distInflight requests per worker, each for at most
		// distPerMsg ranks, so replies stay small and flow while the
		// merge runs.
		for _, o := range owners {
			for len(pending[o]) > 0 && len(inflight[o]) < distInflight {
				k := min(len(pending[o]), distPerMsg)
				rs := pending[o][:k:k]
				pending[o] = pending[o][k:]
				d.Requests++
				d.RanksRequested += len(rs)
				if failed == nil {
					req := make([]byte, 4+4*len(rs))
					binary.LittleEndian.PutUint32(req, uint32(len(rs)))
					for i, r := range rs {
						binary.LittleEndian.PutUint32(req[4+4*i:], uint32(r.rank))
					}
					failed = sendMsg(d.T, o, req)
				}
				if failed != nil {
					for _, r := range rs {
						r.reply <- distReply{err: failed}
					}
					continue
				}
				inflight[o] = append(inflight[o], rs)
				nflight++
			}
		}
		if nflight == 0 {
			continue
		}
		// Receive the oldest reply of the next worker with one due.
		for ; ; next++ {
			o := owners[next%len(owners)]
			if len(inflight[o]) == 0 {
				continue
			}
			rs := inflight[o][0]
			inflight[o] = inflight[o][1:]
			nflight--
			var msg []byte
			if failed == nil {
				msg, failed = recvMsg(d.T, o, buf)
				buf = msg
			}
			if failed != nil {
				for _, r := range rs {
					r.reply <- distReply{err: failed}
				}
			} else if err := parseReply(msg, rs); err != nil {
				failed = err
			}
			next++
			break
		}
	}
}

// parseReply hands one worker's reply to the proxies of rs (copying the
// events out of msg, which is reused).
func parseReply(msg []byte, rs []distReq) error {
	for i, r := range rs {
		if len(msg) < 8 {
			err := fmt.Errorf("parallel analysis: short reply for rank %d", r.rank)
			for _, r := range rs[i:] {
				r.reply <- distReply{err: err}
			}
			return err
		}
		rank := int32(binary.LittleEndian.Uint32(msg))
		n := int32(binary.LittleEndian.Uint32(msg[4:]))
		msg = msg[8:]
		var rep distReply
		switch {
		case int(rank) != r.rank:
			rep.err = fmt.Errorf("parallel analysis: reply for rank %d, expected %d", rank, r.rank)
		case n == -1 && len(msg) >= 4:
			l := int(binary.LittleEndian.Uint32(msg))
			msg = msg[4:]
			if l > len(msg) {
				rep.err = errors.New("parallel analysis: short end record")
				break
			}
			rep.end = &distEnd{}
			if err := json.Unmarshal(msg[:l], rep.end); err != nil {
				rep.err = fmt.Errorf("parallel analysis: end record: %w", err)
			}
			msg = msg[l:]
		case n >= 0 && int(n)*evSize <= len(msg):
			rep.ev = make([]GEvent, n)
			copy(evBytes(rep.ev), msg[:int(n)*evSize])
			msg = msg[int(n)*evSize:]
		default:
			rep.err = fmt.Errorf("parallel analysis: bad reply for rank %d", r.rank)
		}
		r.reply <- rep
		if rep.err != nil {
			for _, r := range rs[i+1:] {
				r.reply <- distReply{err: rep.err}
			}
			return rep.err
		}
	}
	return nil
}

// Close ends a parallel analysis on process 0: every worker is told to
// stop serving. Safe to call more than once, and when no pass ran.
func (d *Dist) Close() error {
	if d == nil || d.Me != 0 || d.Procs <= 1 {
		return nil
	}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return d.stopErr
	}
	d.stopped = true
	if d.reqs != nil {
		close(d.reqs)
	}
	d.mu.Unlock()
	d.wg.Wait()
	var stop [4]byte // count 0
	for w := 1; w < d.Procs; w++ {
		if err := sendMsg(d.T, w, stop[:]); err != nil && d.stopErr == nil {
			d.stopErr = err
		}
	}
	return d.stopErr
}

// remoteDecode replaces a.decode for a rank decoded by another process:
// it pulls the rank's corrected, ordered events batch by batch.
func (a *analyzer) remoteDecode(rs *rankState, owner int, done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(rs.out)
	d := a.dist
	reply := make(chan distReply, 1)
	// One request is always outstanding: the next reply travels while
	// the merge consumes the current one.
	d.reqs <- distReq{rank: rs.in.Rank, owner: owner, reply: reply}
	for {
		rep := <-reply
		if rep.err != nil {
			rs.err = rep.err
			return
		}
		if rep.end != nil {
			e := rep.end
			if e.Err != "" {
				rs.err = errors.New(e.Err)
			}
			rs.unknown, rs.unsorted, rs.badTimes = e.Unknown, e.Unsorted, e.BadTimes
			rs.remoteDamage = e.Damage
			return
		}
		d.reqs <- distReq{rank: rs.in.Rank, owner: owner, reply: reply}
		if len(rep.ev) == 0 {
			continue
		}
		// Call-site indices are this process's: map the pcs again.
		cache := &rs.pcCache
		for i := range rep.ev {
			g := &rep.ev[i]
			slot := &cache[(g.Callsite>>2)&uint64(len(cache)-1)]
			if slot.pc != g.Callsite || !slot.ok {
				slot.pc, slot.site, slot.ok = g.Callsite, a.siteOf(rs, g.Callsite), true
			}
			g.site = slot.site
		}
		select {
		case rs.out <- &batch{ev: rep.ev}:
		case <-done:
			return
		}
	}
}

// Serve runs a worker process (Dist.Me > 0) of a parallel analysis: it
// decodes the rank files Owner gives it and answers process 0's requests
// until told to stop. The pass must be prepared with the same options as
// process 0's (the same command line).
func (p *Pass) Serve(d *Dist) error {
	a := p.a
	n := len(a.rn.Ranks)
	ahead := distAheadFor(n)
	mine := map[int]*rankState{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, ri := range a.rn.Ranks {
		if Owner(i, n, d.Procs) != d.Me {
			continue
		}
		rs := a.ranks[ri.Rank]
		rs.out = make(chan *batch, ahead)
		rs.free = make(chan *batch, ahead+2)
		mine[ri.Rank] = rs
		wg.Add(1)
		go a.decode(rs, done, &wg)
	}
	defer func() {
		close(done)
		for _, rs := range mine { // unblock decoders waiting to send
			for range rs.out {
			}
		}
		wg.Wait()
	}()
	var in, out []byte
	for {
		msg, err := recvMsg(d.T, 0, in)
		if err != nil {
			return err
		}
		in = msg
		if len(msg) < 4 {
			return errors.New("parallel analysis: short request")
		}
		cnt := int(binary.LittleEndian.Uint32(msg))
		if cnt == 0 {
			return nil
		}
		if len(msg) < 4+4*cnt {
			return errors.New("parallel analysis: short request")
		}
		out = out[:0]
		for i := 0; i < cnt; i++ {
			r := int(int32(binary.LittleEndian.Uint32(msg[4+4*i:])))
			rs := mine[r]
			var b *batch
			ok := false
			if rs != nil {
				b, ok = <-rs.out
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(int32(r)))
			if ok {
				// This batch and those ready behind it, as one.
				at := len(out)
				out = binary.LittleEndian.AppendUint32(out, 0)
				n := 0
				for k := 0; ok && k < ahead; k++ {
					if k > 0 {
						select {
						case b, ok = <-rs.out:
						default:
							ok = false
						}
						if !ok {
							break
						}
					}
					n += len(b.ev)
					out = append(out, evBytes(b.ev)...)
					select { // copied: back to the decoder
					case rs.free <- b:
					default:
					}
				}
				binary.LittleEndian.PutUint32(out[at:], uint32(n))
				continue
			}
			end := distEnd{}
			if rs == nil {
				end.Err = fmt.Sprintf("process %d does not hold rank %d", d.Me, r)
			} else {
				end.Unknown, end.Unsorted, end.BadTimes = rs.unknown, rs.unsorted, rs.badTimes
				if rs.err != nil {
					end.Err = rs.err.Error()
				}
				if m := rs.in.Src.Meta(); m != nil && len(m.Damage) > rs.in.knownDamage {
					for _, dm := range m.Damage[rs.in.knownDamage:] {
						end.Damage = append(end.Damage, damageString(rs.in.Path, dm))
					}
				}
			}
			j, _ := json.Marshal(end)
			out = binary.LittleEndian.AppendUint32(out, uint32(0xffffffff))
			out = binary.LittleEndian.AppendUint32(out, uint32(len(j)))
			out = append(out, j...)
		}
		if err := sendMsg(d.T, 0, out); err != nil {
			return err
		}
	}
}

// SetDist makes process 0's pass pull the ranks Owner gives to other
// processes from them (see Serve) instead of reading them itself.
func (p *Pass) SetDist(d *Dist) {
	if d != nil && d.Procs > 1 && d.Me == 0 {
		p.a.dist = d
	}
}

// ServeNothing answers process 0 as a worker that could not prepare the
// run (every requested rank ends with an error) until told to stop.
func ServeNothing(d *Dist) error {
	p := &Pass{a: &analyzer{rn: &Run{}}}
	return p.Serve(d)
}
