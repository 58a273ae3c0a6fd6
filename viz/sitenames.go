package viz

import "strconv"

// siteNamer names call sites for the exports (CSV, Perfetto), caching each
// name. With a per-rank resolver (merge.Pass.SiteName) the cache is keyed
// by (rank, pc), since ranks that load an object at different bases (ASLR)
// give the same pc different meanings; otherwise by pc alone. An address
// that resolves to nothing is written as 0x... .
type siteNamer struct {
	resolve func(pc uint64) string
	rankRes func(rank int32, pc uint64) string
	names   map[rankPC]string
}

// rankPC keys call-site names (rank -1: the name does not depend on it).
type rankPC struct {
	rank int32
	pc   uint64
}

// maxSiteNames bounds the cache; further names are resolved every time.
const maxSiteNames = 1 << 16

func (n *siteNamer) callsite(rank int32, pc uint64) string {
	k := rankPC{pc: pc, rank: -1}
	if n.rankRes != nil {
		k.rank = rank
	}
	if s, ok := n.names[k]; ok {
		return s
	}
	s := ""
	if n.rankRes != nil {
		s = n.rankRes(rank, pc)
	} else if n.resolve != nil {
		s = n.resolve(pc)
	}
	if s == "" {
		s = "0x" + strconv.FormatUint(pc, 16)
	}
	if n.names == nil {
		n.names = make(map[rankPC]string)
	}
	if len(n.names) < maxSiteNames {
		n.names[k] = s
	}
	return s
}
