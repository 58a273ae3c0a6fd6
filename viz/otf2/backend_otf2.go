//go:build otf2

package otf2

/*
#cgo pkg-config: otf2
#include <stdlib.h>
#include <otf2/otf2.h>

// Event files are flushed when a chunk is full; no BufferFlush records
// (the post-flush callback is NULL).
static OTF2_FlushType gck_otf2_pre_flush(void *u, OTF2_FileType t, OTF2_LocationRef l, void *c, bool f)
{
	(void)u; (void)t; (void)l; (void)c; (void)f;
	return OTF2_FLUSH;
}
static OTF2_FlushCallbacks gck_otf2_flush = { gck_otf2_pre_flush, NULL };
static OTF2_ErrorCode gck_otf2_set_flush(OTF2_Archive *a) { return OTF2_Archive_SetFlushCallbacks(a, &gck_otf2_flush, NULL); }
*/
import "C"

import (
	"fmt"
	"os"
	"sort"
	"unsafe"
)

// cgoBackend writes through libotf2.
type cgoBackend struct {
	arch    *C.OTF2_Archive
	writers map[int32]*C.OTF2_EvtWriter
	strs    map[string]uint32
	gdw     *C.OTF2_GlobalDefWriter
}

func check(what string, rc C.OTF2_ErrorCode) error {
	if rc != C.OTF2_SUCCESS {
		return fmt.Errorf("%s: %s (%s)", what, C.GoString(C.OTF2_Error_GetName(rc)), C.GoString(C.OTF2_Error_GetDescription(rc)))
	}
	return nil
}

// Chunk size of each location's event buffer: memory is about
// ranks × chunk while writing (OTF2's minimum is 256 KiB).
const eventChunk = 256 << 10

func newBackend(dir, name string, ranks int) (backend, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("otf2: %w", err)
	}
	cdir, cname := C.CString(dir), C.CString(name)
	defer C.free(unsafe.Pointer(cdir))
	defer C.free(unsafe.Pointer(cname))
	a := C.OTF2_Archive_Open(cdir, cname, C.OTF2_FILEMODE_WRITE, eventChunk, 4<<20, C.OTF2_SUBSTRATE_POSIX, C.OTF2_COMPRESSION_NONE)
	if a == nil {
		return nil, fmt.Errorf("otf2: cannot create archive %s/%s.otf2 (exists already, or not writable)", dir, name)
	}
	b := &cgoBackend{arch: a, writers: map[int32]*C.OTF2_EvtWriter{}, strs: map[string]uint32{}}
	if err := check("OTF2_Archive_SetFlushCallbacks", C.gck_otf2_set_flush(a)); err != nil {
		C.OTF2_Archive_Close(a)
		return nil, err
	}
	if err := check("OTF2_Archive_SetSerialCollectiveCallbacks", C.OTF2_Archive_SetSerialCollectiveCallbacks(a)); err != nil {
		C.OTF2_Archive_Close(a)
		return nil, err
	}
	if err := check("OTF2_Archive_OpenEvtFiles", C.OTF2_Archive_OpenEvtFiles(a)); err != nil {
		C.OTF2_Archive_Close(a)
		return nil, err
	}
	return b, nil
}

func (b *cgoBackend) writer(loc int32) (*C.OTF2_EvtWriter, error) {
	if w := b.writers[loc]; w != nil {
		return w, nil
	}
	w := C.OTF2_Archive_GetEvtWriter(b.arch, C.OTF2_LocationRef(loc))
	if w == nil {
		return nil, fmt.Errorf("OTF2_Archive_GetEvtWriter(%d) failed", loc)
	}
	b.writers[loc] = w
	return w, nil
}

func (b *cgoBackend) write(r *record) error {
	w, err := b.writer(r.loc)
	if err != nil {
		return err
	}
	ts := C.OTF2_TimeStamp(r.ts)
	var rc C.OTF2_ErrorCode
	switch r.kind {
	case recEnter:
		rc = C.OTF2_EvtWriter_Enter(w, nil, ts, C.OTF2_RegionRef(r.region))
	case recLeave:
		rc = C.OTF2_EvtWriter_Leave(w, nil, ts, C.OTF2_RegionRef(r.region))
	case recCollBegin:
		rc = C.OTF2_EvtWriter_MpiCollectiveBegin(w, nil, ts)
	case recCollEnd:
		rc = C.OTF2_EvtWriter_MpiCollectiveEnd(w, nil, ts, C.OTF2_CollectiveOp(r.collOp), C.OTF2_CommRef(r.comm), C.uint32_t(r.peer), C.uint64_t(r.n1), C.uint64_t(r.n2))
	case recSend:
		rc = C.OTF2_EvtWriter_MpiSend(w, nil, ts, C.uint32_t(r.peer), C.OTF2_CommRef(r.comm), C.uint32_t(r.tag), C.uint64_t(r.n1))
	case recRecv:
		rc = C.OTF2_EvtWriter_MpiRecv(w, nil, ts, C.uint32_t(r.peer), C.OTF2_CommRef(r.comm), C.uint32_t(r.tag), C.uint64_t(r.n1))
	case recIsend:
		rc = C.OTF2_EvtWriter_MpiIsend(w, nil, ts, C.uint32_t(r.peer), C.OTF2_CommRef(r.comm), C.uint32_t(r.tag), C.uint64_t(r.n1), C.uint64_t(r.req))
	case recIsendComplete:
		rc = C.OTF2_EvtWriter_MpiIsendComplete(w, nil, ts, C.uint64_t(r.req))
	case recIrecvRequest:
		rc = C.OTF2_EvtWriter_MpiIrecvRequest(w, nil, ts, C.uint64_t(r.req))
	case recIrecv:
		rc = C.OTF2_EvtWriter_MpiIrecv(w, nil, ts, C.uint32_t(r.peer), C.OTF2_CommRef(r.comm), C.uint32_t(r.tag), C.uint64_t(r.n1), C.uint64_t(r.req))
	case recICollRequest:
		rc = C.OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nil, ts, C.uint64_t(r.req))
	case recICollComplete:
		rc = C.OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nil, ts, C.OTF2_CollectiveOp(r.collOp), C.OTF2_CommRef(r.comm), C.uint32_t(r.peer), C.uint64_t(r.n1), C.uint64_t(r.n2), C.uint64_t(r.req))
	default:
		return fmt.Errorf("unknown record kind %d", r.kind)
	}
	return check("writing an event of location "+fmt.Sprint(r.loc), rc)
}

// str defines a string once and returns its ref.
func (b *cgoBackend) str(s string) (C.OTF2_StringRef, error) {
	if id, ok := b.strs[s]; ok {
		return C.OTF2_StringRef(id), nil
	}
	id := uint32(len(b.strs))
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	if err := check("OTF2_GlobalDefWriter_WriteString", C.OTF2_GlobalDefWriter_WriteString(b.gdw, C.OTF2_StringRef(id), cs)); err != nil {
		return 0, err
	}
	b.strs[s] = id
	return C.OTF2_StringRef(id), nil
}

func (b *cgoBackend) finish(t *translator) (err error) {
	defer func() {
		if cerr := check("OTF2_Archive_Close", C.OTF2_Archive_Close(b.arch)); err == nil {
			err = cerr
		}
	}()
	// Every rank gets a location, also one without events.
	for _, r := range t.info.Ranks {
		if _, err := b.writer(r.Rank); err != nil {
			return err
		}
	}
	locs := make([]int32, 0, len(b.writers))
	for l := range b.writers {
		locs = append(locs, l)
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i] < locs[j] })
	for _, l := range locs {
		if err := check("OTF2_Archive_CloseEvtWriter", C.OTF2_Archive_CloseEvtWriter(b.arch, b.writers[l])); err != nil {
			return err
		}
	}
	if err := check("OTF2_Archive_CloseEvtFiles", C.OTF2_Archive_CloseEvtFiles(b.arch)); err != nil {
		return err
	}
	// Local definition files (empty) keep readers happy.
	if err := check("OTF2_Archive_OpenDefFiles", C.OTF2_Archive_OpenDefFiles(b.arch)); err != nil {
		return err
	}
	for _, l := range locs {
		dw := C.OTF2_Archive_GetDefWriter(b.arch, C.OTF2_LocationRef(l))
		if dw == nil {
			return fmt.Errorf("OTF2_Archive_GetDefWriter(%d) failed", l)
		}
		if err := check("OTF2_Archive_CloseDefWriter", C.OTF2_Archive_CloseDefWriter(b.arch, dw)); err != nil {
			return err
		}
	}
	if err := check("OTF2_Archive_CloseDefFiles", C.OTF2_Archive_CloseDefFiles(b.arch)); err != nil {
		return err
	}
	b.gdw = C.OTF2_Archive_GetGlobalDefWriter(b.arch)
	if b.gdw == nil {
		return fmt.Errorf("OTF2_Archive_GetGlobalDefWriter failed")
	}
	g := b.gdw
	minTS, length := t.minTS, uint64(0)
	if minTS == ^uint64(0) {
		minTS = 0
	} else {
		length = t.maxTS - t.minTS
	}
	if err := check("WriteClockProperties", C.OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, C.uint64_t(minTS), C.uint64_t(length), C.OTF2_UNDEFINED_TIMESTAMP)); err != nil {
		return err
	}
	// Regions.
	for id, op := range t.regionOp {
		name, err := b.str(op.String())
		if err != nil {
			return err
		}
		empty, err := b.str("")
		if err != nil {
			return err
		}
		paradigm := C.OTF2_Paradigm(C.OTF2_PARADIGM_MPI)
		if regionRole(op) == roleArtificial {
			paradigm = C.OTF2_PARADIGM_MEASUREMENT_SYSTEM
		}
		if err := check("WriteRegion", C.OTF2_GlobalDefWriter_WriteRegion(g, C.OTF2_RegionRef(id), name, name, empty,
			C.OTF2_RegionRole(regionRole(op)), paradigm, C.OTF2_REGION_FLAG_NONE, empty, 0, 0)); err != nil {
			return err
		}
	}
	// System tree: machine -> host nodes; a location group and a
	// location per rank.
	machine, err := b.str("machine")
	if err != nil {
		return err
	}
	if err := check("WriteSystemTreeNode", C.OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, machine, C.OTF2_UNDEFINED_SYSTEM_TREE_NODE)); err != nil {
		return err
	}
	hosts := map[string]uint32{}
	ranks := append([]Rank(nil), t.info.Ranks...)
	known := map[int32]bool{}
	for _, r := range ranks {
		known[r.Rank] = true
	}
	for _, l := range locs {
		if !known[l] {
			ranks = append(ranks, Rank{Rank: l})
		}
	}
	sort.Slice(ranks, func(i, j int) bool { return ranks[i].Rank < ranks[j].Rank })
	nodeClass, err := b.str("node")
	if err != nil {
		return err
	}
	for _, r := range ranks {
		h := r.Host
		if h == "" {
			h = "unknown host"
		}
		node, ok := hosts[h]
		if !ok {
			node = uint32(len(hosts) + 1)
			hosts[h] = node
			hn, err := b.str(h)
			if err != nil {
				return err
			}
			if err := check("WriteSystemTreeNode", C.OTF2_GlobalDefWriter_WriteSystemTreeNode(g, C.OTF2_SystemTreeNodeRef(node), hn, nodeClass, 0)); err != nil {
				return err
			}
		}
		gn, err := b.str(fmt.Sprintf("MPI Rank %d", r.Rank))
		if err != nil {
			return err
		}
		if err := check("WriteLocationGroup", C.OTF2_GlobalDefWriter_WriteLocationGroup(g, C.OTF2_LocationGroupRef(r.Rank), gn,
			C.OTF2_LOCATION_GROUP_TYPE_PROCESS, C.OTF2_SystemTreeNodeRef(node), C.OTF2_UNDEFINED_LOCATION_GROUP)); err != nil {
			return err
		}
		ln, err := b.str("Master thread")
		if err != nil {
			return err
		}
		var n uint64
		if s := t.locs[r.Rank]; s != nil {
			n = s.events
		}
		if err := check("WriteLocation", C.OTF2_GlobalDefWriter_WriteLocation(g, C.OTF2_LocationRef(r.Rank), ln,
			C.OTF2_LOCATION_TYPE_CPU_THREAD, C.uint64_t(n), C.OTF2_LocationGroupRef(r.Rank))); err != nil {
			return err
		}
	}
	// MPI groups and communicators: group 0 lists the locations of the
	// world ranks (OTF2_GROUP_TYPE_COMM_LOCATIONS), each comm's group its
	// members as indices into it (world ranks).
	mpiLocs, err := b.str("MPI_COMM_WORLD locations")
	if err != nil {
		return err
	}
	members := make([]C.uint64_t, len(ranks))
	for i, r := range ranks {
		members[i] = C.uint64_t(r.Rank)
	}
	if err := writeGroup(g, 0, mpiLocs, C.OTF2_GROUP_TYPE_COMM_LOCATIONS, members); err != nil {
		return err
	}
	for i, c := range t.info.Comms {
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("comm %#x", c.ID)
		}
		cn, err := b.str(name)
		if err != nil {
			return err
		}
		mem := make([]C.uint64_t, len(c.Members))
		for j, w := range c.Members {
			mem[j] = C.uint64_t(w)
		}
		typ := C.OTF2_GroupType(C.OTF2_GROUP_TYPE_COMM_GROUP)
		if len(c.Members) == 1 && c.ID == 2 {
			typ = C.OTF2_GROUP_TYPE_COMM_SELF
			mem = nil
		}
		grp := C.OTF2_GroupRef(i + 1)
		if err := writeGroup(g, grp, cn, typ, mem); err != nil {
			return err
		}
		parent := C.OTF2_CommRef(C.OTF2_UNDEFINED_COMM)
		if p, ok := t.comms[c.Parent]; ok && c.Parent != c.ID {
			parent = C.OTF2_CommRef(p)
		}
		if err := check("WriteComm", C.OTF2_GlobalDefWriter_WriteComm(g, C.OTF2_CommRef(i), cn, grp, parent, C.OTF2_COMM_FLAG_NONE)); err != nil {
			return err
		}
	}
	return nil
}

func writeGroup(g *C.OTF2_GlobalDefWriter, id C.OTF2_GroupRef, name C.OTF2_StringRef, typ C.OTF2_GroupType, members []C.uint64_t) error {
	var p *C.uint64_t
	if len(members) > 0 {
		p = &members[0]
	}
	return check("WriteGroup", C.OTF2_GlobalDefWriter_WriteGroup(g, id, name, typ, C.OTF2_PARADIGM_MPI, C.OTF2_GROUP_FLAG_NONE, C.uint32_t(len(members)), p))
}

// Available reports whether this build can write OTF2.
func Available() bool { return true }
