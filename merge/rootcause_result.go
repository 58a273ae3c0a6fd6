package merge

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
)

// RankList formats sorted world ranks as ranges: "0-3,5,9-11".
func RankList(ranks []int32) string {
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(ranks[i])))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(ranks[j])))
		}
		i = j + 1
	}
	return b.String()
}

// regionName names region id.
func (s *RootCauseStream) regionName(id int32) string {
	k := s.regions[id]
	site := func(x int32) string {
		if x < 0 || int(x) >= len(s.sitePC) {
			return "?"
		}
		sp := s.sitePC[x]
		name := ""
		if s.siteName != nil {
			name = s.siteName(sp.rank, sp.pc)
		}
		if name == "" {
			name = fmt.Sprintf("0x%x", sp.pc)
		}
		return name
	}
	if k.op != 0 {
		return k.op.String() + " at " + site(k.a)
	}
	return site(k.a) + " → " + site(k.b)
}

// SetClockBound sets the clock's error bound (ns) that Result compares
// each cause's mean delay with (RootCauseOptions.ClockBoundNS), once the
// pass has computed it.
func (s *RootCauseStream) SetClockBound(ns float64) { s.opt.ClockBoundNS = ns }

// Result returns the analysis. Call it once, after the last Add.
func (s *RootCauseStream) Result() *datamodel.RootCauseResult {
	if s == nil {
		return nil
	}
	// The order-free sums (rcSum) are converted to float64 here, once.
	total := s.totalWait().float()
	out := &datamodel.RootCauseResult{TotalWaitNS: total, WaitStates: s.waitStates,
		CollectiveWaitNS: s.byKind[0].float(), LateSenderNS: s.byKind[1].float(), LateReceiverNS: s.byKind[2].float(),
		WaitAtFenceNS: s.byKind[3].float(), LatePostNS: s.byKind[rcKindLatePost].float(), EarlyWaitNS: s.byKind[rcKindEarlyWait].float(),
		SmallNS: s.small.float(), NoDelayNS: s.noDelay.float(), UnresolvedNS: s.unresolved.float(),
		TruncatedWaits: s.truncated, HistoryPerRank: s.hist}
	names := make([]string, len(s.regions))
	for i := range s.regions {
		names[i] = s.regionName(int32(i))
	}
	nranks := 0
	for i := range s.ranks.len() {
		if r := s.ranks.at(int32(i)); r != nil && r.started {
			nranks++
			out.RankTimeNS += r.lastExit - r.firstT
		}
	}
	// Causes, grouped per region by similar cost.
	type rc struct {
		rank int32
		c    *rcCause
		cost float64 // direct + long, converted once
	}
	byRegion := map[int32][]rc{}
	var attributed rcSum
	s.eachCause(func(k int64, c *rcCause) {
		cost := c.direct.plus(c.long)
		attributed.merge(cost)
		reg := int32(uint32(k))
		byRegion[reg] = append(byRegion[reg], rc{int32(k >> 32), c, cost.float()})
	})
	out.AttributedNS = attributed.float()
	type regCause struct {
		datamodel.RootCause
		reg int32
	}
	var causes []regCause
	for reg, l := range byRegion {
		sort.Slice(l, func(i, j int) bool {
			if ci, cj := l[i].cost, l[j].cost; ci != cj {
				return ci > cj
			}
			return l[i].rank < l[j].rank
		})
		for i := 0; i < len(l); {
			head := l[i].cost
			j := i
			for j < len(l) && l[j].cost >= head/2 {
				j++
			}
			if j == i {
				j = i + 1
			}
			rcz := datamodel.RootCause{Region: names[reg], Call: s.regions[reg].op != 0, RankCount: j - i}
			var ranks []int32
			var direct, long, delay rcSum
			via := map[int32]rcSum{}
			for _, x := range l[i:j] {
				ranks = append(ranks, x.rank)
				direct.merge(x.c.direct)
				long.merge(x.c.long)
				delay.merge(x.c.delay)
				rcz.Waits += x.c.waits
				for _, v := range x.c.via {
					via[v.rank] = via[v.rank].plus(v.amt)
				}
			}
			sort.Slice(ranks, func(a, b int) bool { return ranks[a] < ranks[b] })
			rcz.Ranks = RankList(ranks)
			rcz.DirectNS, rcz.PropagatedNS, rcz.DelayNS = direct.float(), long.float(), delay.float()
			rcz.CostNS = direct.plus(long).float()
			if total > 0 {
				rcz.Share = rcz.CostNS / total
			}
			viaNS := make(map[int32]float64, len(via))
			for r, v := range via {
				viaNS[r] = v.float()
			}
			rcz.Via = topAmounts(viaNS, 5)
			if rcz.Waits > 0 && s.opt.ClockBoundNS > 0 && rcz.DelayNS/float64(rcz.Waits) <= s.opt.ClockBoundNS {
				rcz.BelowClockBound = true
			}
			causes = append(causes, regCause{rcz, reg})
			i = j
		}
	}
	// The order: by cost, then by region name, ranks and, where the
	// names are alike, the region's content (regionCmp), never the index
	// the stream met it at (D75, point 4).
	sort.Slice(causes, func(i, j int) bool {
		if causes[i].CostNS != causes[j].CostNS {
			return causes[i].CostNS > causes[j].CostNS
		}
		if causes[i].Region != causes[j].Region {
			return causes[i].Region < causes[j].Region
		}
		if causes[i].Ranks != causes[j].Ranks {
			return causes[i].Ranks < causes[j].Ranks
		}
		return s.regionCmp(causes[i].reg, causes[j].reg) < 0
	})
	if len(causes) > s.opt.TopN {
		causes = causes[:s.opt.TopN]
	}
	for _, c := range causes {
		out.Causes = append(out.Causes, c.RootCause)
	}
	// Regions across ranks.
	type regAgg struct {
		count, ranks int
		total, max   float64
		maxRank      int32
	}
	aggs := make([]regAgg, len(s.regions))
	for i := range s.ranks.len() {
		r := s.ranks.at(int32(i))
		if r == nil {
			continue
		}
		for id, acc := range r.stats {
			if acc.count == 0 {
				continue
			}
			g := &aggs[id]
			g.count += acc.count
			g.ranks++
			g.total += acc.total
			if acc.total > g.max || (acc.total == g.max && r.rank < g.maxRank) {
				g.max, g.maxRank = acc.total, r.rank
			}
		}
	}
	den := float64(max(nranks, 1))
	type regStat struct {
		datamodel.RegionStat
		reg int32
	}
	var regs []regStat
	for id, g := range aggs {
		if g.count == 0 {
			continue
		}
		mean := g.total / den
		regs = append(regs, regStat{datamodel.RegionStat{Region: names[id], Call: s.regions[id].op != 0, Count: g.count,
			Ranks: g.ranks, Total: g.total, MeanNS: mean, MaxNS: g.max, MaxRank: g.maxRank, ImbalanceNS: g.max - mean}, int32(id)})
	}
	sort.Slice(regs, func(i, j int) bool {
		if regs[i].ImbalanceNS != regs[j].ImbalanceNS {
			return regs[i].ImbalanceNS > regs[j].ImbalanceNS
		}
		if regs[i].Region != regs[j].Region {
			return regs[i].Region < regs[j].Region
		}
		return s.regionCmp(regs[i].reg, regs[j].reg) < 0
	})
	if len(regs) > s.opt.TopN {
		regs = regs[:s.opt.TopN]
	}
	for _, r := range regs {
		out.Regions = append(out.Regions, r.RegionStat)
	}
	// Critical path.
	cp := datamodel.CriticalPath{EndRank: s.cpRank}
	// The path's sums are order-free (rcSum): the entries come in the
	// order of their keys, whose regions are numbered as the stream met
	// them (D75, point 4).
	perReg := map[int32]rcSum{}
	regRanks := map[int32][]int32{}
	perRank := map[int32]rcSum{}
	var length rcSum
	for _, e := range s.criticalPath() {
		rank, reg := int32(e.cause>>32), int32(uint32(e.cause))
		length.add(e.amt)
		v := perReg[reg]
		v.add(e.amt)
		perReg[reg] = v
		v = perRank[rank]
		v.add(e.amt)
		perRank[rank] = v
		if e.amt > 0 {
			regRanks[reg] = append(regRanks[reg], rank)
		}
	}
	cp.LengthNS = length.float()
	type cpReg struct {
		datamodel.CPRegion
		reg int32
	}
	var cpRegs []cpReg
	for reg, ts := range perReg {
		t := ts.float()
		if !(t > 0) {
			continue
		}
		mean := aggs[reg].total / den
		rr := regRanks[reg]
		sort.Slice(rr, func(i, j int) bool { return rr[i] < rr[j] })
		c := datamodel.CPRegion{Region: names[reg], Call: s.regions[reg].op != 0, PathNS: t, MeanNS: mean,
			ImbalanceNS: max(0, t-mean), Ranks: RankList(rr)}
		if cp.LengthNS > 0 {
			c.Share = t / cp.LengthNS
		}
		cpRegs = append(cpRegs, cpReg{c, reg})
	}
	sort.Slice(cpRegs, func(i, j int) bool {
		if cpRegs[i].PathNS != cpRegs[j].PathNS {
			return cpRegs[i].PathNS > cpRegs[j].PathNS
		}
		if cpRegs[i].Region != cpRegs[j].Region {
			return cpRegs[i].Region < cpRegs[j].Region
		}
		return s.regionCmp(cpRegs[i].reg, cpRegs[j].reg) < 0
	})
	if len(cpRegs) > s.opt.TopN {
		cpRegs = cpRegs[:s.opt.TopN]
	}
	for _, c := range cpRegs {
		cp.Regions = append(cp.Regions, c.CPRegion)
	}
	rankNS := make(map[int32]float64, len(perRank))
	for r, v := range perRank {
		rankNS[r] = v.float()
	}
	cp.Ranks = topAmounts(rankNS, s.opt.TopN)
	out.CriticalPath = cp
	return out
}

// topAmounts returns the n largest positive amounts, largest first (ties
// by rank).
func topAmounts(m map[int32]float64, n int) []datamodel.RankAmount {
	var l []datamodel.RankAmount
	for r, v := range m {
		if v > 0 {
			l = append(l, datamodel.RankAmount{Rank: r, NS: v})
		}
	}
	return largestAmounts(l, n)
}

// largestAmounts sorts l largest first (ties by rank) and keeps n.
func largestAmounts(l []datamodel.RankAmount, n int) []datamodel.RankAmount {
	sort.Slice(l, func(i, j int) bool {
		if l[i].NS != l[j].NS {
			return l[i].NS > l[j].NS
		}
		return l[i].Rank < l[j].Rank
	})
	if len(l) > n {
		l = l[:n]
	}
	return l
}

// MarkMinShare is the share of all waiting a root cause needs for Marks
// to draw it.
const MarkMinShare = 0.10

// Marks returns what to highlight: the delays of the top n root causes
// of res with at least MarkMinShare of the waiting (the delays of the region on each of the cause's ranks that made
// others wait; up to rcMaxIv per rank, spread uniformly over the run once
// there are more) and the critical path's stays on ranks (the last
// 16,384 to 32,768 of them). Call it after Result.
func (s *RootCauseStream) Marks(res *datamodel.RootCauseResult, n int) []datamodel.Mark {
	if s == nil || res == nil {
		return nil
	}
	var out []datamodel.Mark
	byName := map[string]int32{}
	for i := range s.regions {
		byName[s.regionName(int32(i))] = int32(i)
	}
	for i, c := range res.Causes {
		if i == n || c.Share < MarkMinShare {
			break
		}
		reg, ok := byName[c.Region]
		if !ok {
			continue
		}
		label := fmt.Sprintf("root cause %d: %s (%.0f%% of the waiting)", i+1, c.Region, 100*c.Share)
		for _, r := range parseRankList(c.Ranks) {
			if rc := s.causeIf(rcCauseKey(r, reg)); rc != nil && rc.draw != nil {
				for _, iv := range rc.draw.iv {
					out = append(out, datamodel.Mark{Kind: datamodel.MarkRootCause, Rank: r, Start: iv[0], End: iv[1], Label: label})
				}
			}
		}
	}
	for _, st := range s.criticalStints() {
		if st.to > st.from {
			out = append(out, datamodel.Mark{Kind: datamodel.MarkCriticalPath, Rank: st.rank, Start: st.from, End: st.to, Label: "critical path"})
		}
	}
	return out
}

// parseRankList reads RankList's format.
func parseRankList(s string) []int32 {
	var out []int32
	for _, part := range strings.Split(s, ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if found {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for r := a; r <= b; r++ {
			out = append(out, int32(r))
		}
	}
	return out
}
