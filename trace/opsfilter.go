package trace

import (
	"fmt"
	"sort"
	"strings"
)

// Selective tracing (GCLOCK_OPS, docs/reference/settings-details.md): which operations
// the recorder writes. The recorder applies the filter; tracemerge reads the
// same setting back from the header (Header.Config) to say in the report
// what was left out.

// OpsClasses are the class names GCLOCK_OPS accepts besides function
// names, with what each stands for.
var OpsClasses = []struct{ Name, Means string }{
	{"all", "every MPI operation the recorder wraps"},
	{"coll", "blocking collectives (MPI_Barrier ... MPI_Exscan)"},
	{"nbc", "nonblocking collectives (MPI_Ibarrier ... MPI_Iexscan)"},
	{"p2p", "point-to-point: sends, receives, probes, persistent requests and their starts"},
	{"wait", "completions: MPI_Wait*, MPI_Test* (and their unsuccessful polls)"},
	{"rma", "one-sided: window creation and free, MPI_Put ... MPI_Rget_accumulate, fences, locks, flushes, post/start/complete/wait"},
}

func opsOfClass(class string) ([]Op, bool) {
	var out []Op
	for _, o := range Ops() {
		if o.IsRecorder() || o == OpPolls {
			continue
		}
		var in bool
		switch class {
		case "all":
			in = true
		case "coll":
			in = o.IsCollective()
		case "nbc":
			in = o.IsNonblockingCollective()
		case "p2p":
			in = o.IsPointToPoint() && !o.IsCompletion()
		case "wait":
			in = o.IsCompletion()
		case "rma":
			in = o.IsRMA()
		default:
			return nil, false
		}
		if in {
			out = append(out, o)
		}
	}
	return out, true
}

// ParseOpsFilter reads a GCLOCK_OPS value and returns the operations it
// excludes (sorted). The value is a comma-separated list of items, each a
// function name (MPI_Allreduce, Allreduce or allreduce) or a class (all,
// coll, nbc, p2p, wait, rma), optionally signed: if the first item starts with
// '-' everything is recorded except what '-' items remove ("-p2p,-wait");
// otherwise only the listed items are ("coll,MPI_Send" or
// "all,-MPI_Bcast"). Later items override earlier ones. The recorder's
// own events (buffer flushes, resync epochs) are always written, and
// MPI_Pcontrol too unless named, so paused intervals stay visible. An
// empty value excludes nothing.
func ParseOpsFilter(spec string) ([]Op, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	items := strings.Split(spec, ",")
	on := map[Op]bool{}
	if strings.HasPrefix(strings.TrimSpace(items[0]), "-") {
		all, _ := opsOfClass("all")
		for _, o := range all {
			on[o] = true
		}
	}
	pcontrolNamed := false
	for _, raw := range items {
		it := strings.TrimSpace(raw)
		include := true
		switch {
		case strings.HasPrefix(it, "-"):
			include, it = false, strings.TrimSpace(it[1:])
		case strings.HasPrefix(it, "+"):
			it = strings.TrimSpace(it[1:])
		}
		if it == "" {
			return nil, fmt.Errorf("GCLOCK_OPS=%q: empty item", spec)
		}
		ops, ok := opsOfClass(strings.ToLower(it))
		if !ok {
			o, found := opByLooseName(it)
			if !found {
				names := make([]string, len(OpsClasses))
				for i, c := range OpsClasses {
					names[i] = c.Name
				}
				return nil, fmt.Errorf("GCLOCK_OPS=%q: %q is neither an MPI function the recorder wraps nor a class (%s)", spec, it, strings.Join(names, ", "))
			}
			ops = []Op{o}
			pcontrolNamed = pcontrolNamed || o == OpPcontrol
		}
		for _, o := range ops {
			on[o] = include
		}
	}
	if !pcontrolNamed {
		on[OpPcontrol] = true
	}
	var off []Op
	all, _ := opsOfClass("all")
	for _, o := range all {
		if !on[o] {
			off = append(off, o)
		}
	}
	sort.Slice(off, func(i, j int) bool { return off[i] < off[j] })
	return off, nil
}

// opByLooseName finds an MPI function by name, case-insensitively and with
// or without the MPI_ prefix; the recorder's own events are not names.
func opByLooseName(name string) (Op, bool) {
	n := strings.ToLower(name)
	if !strings.HasPrefix(n, "mpi_") {
		n = "mpi_" + n
	}
	for _, o := range Ops() {
		if strings.ToLower(o.String()) == n {
			return o, true
		}
	}
	return OpUnknown, false
}
