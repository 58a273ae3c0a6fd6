// Package layering holds the check of the import direction between the
// project's packages (docs/explanation/architecture.md, "Import
// direction"): every package sits on a layer, and it imports only packages
// of lower layers, so that a package can be read knowing only those below
// it and no analysis reaches back into the engine that feeds it.
package layering

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/gclock/gclock/"

// layers places every package of the module (its path inside the module);
// a package may import only packages of a lower layer. A new package goes
// here and into docs/explanation/architecture.md.
var layers = map[string]int{
	// 0: leaves, the standard library and outside modules only
	"trace":                 0,
	"clocksync":             0,
	"merge/callsite":        0,
	"mpirt":                 0,
	"internal/cshimdeps":    0,
	"internal/doccheck":     0,
	"internal/launch":       0,
	"internal/layering":     0,
	"internal/settings":     0,
	"trace/synth":           1,
	"clocksync/sim":         1,
	"pmpi/internal/wrapgen": 1,
	// the clock correction (local to global time), on trace and clocksync
	"merge/correct": 1,
	// the reports' data model (events of the merged stream, the analysis's
	// results), on trace
	"merge/datamodel": 1,
	// loading a run directory (the rank files, their sources and
	// problems), on trace
	"merge/rundir": 1,
	// 2: the analysis engine (decoding, merge, matching,
	// metrics, the partitioned passes)
	"merge": 2,
	// a simulated long run corrected as tracemerge corrects it (on
	// clocksync/sim and merge/correct)
	"clocksync/sim/longrun": 2,
	// the summary of tracemerge info and the post-mortem, on the loaded
	// run and the clock correction (not the engine)
	"merge/runinfo":    2,
	"merge/postmortem": 2,
	// 3: analyses over the engine's run and data model
	"merge/rma":             3,
	"internal/analysistest": 3,
	// 4: outputs
	"viz":      4,
	"viz/otf2": 4,
	// 5: the recorder's Go half (a main package), commands, benchmarks, tests
	"pmpi":                  5,
	"cmd/tracemerge":        5,
	"cmd/clocksim":          5,
	"bench/cmd/gclockbench": 5,
	"tests":                 5,
	"tests/thirdparty":      5,
}

func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// imports lists, per package of the module, the module's packages its
// non-test files import, with and without the otf2 build tag.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tags := range []string{"", "otf2"} {
		cmd := exec.Command("go", "list", "-tags", tags, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
		cmd.Dir = root()
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list ./... (tags %q) in %s: %v\n%s", tags, root(), err, b)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || !strings.HasPrefix(f[0], module) {
				continue
			}
			p := strings.TrimPrefix(f[0], module)
			if _, ok := out[p]; !ok {
				out[p] = nil
			}
			for _, imp := range f[1:] {
				if imp, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(out[p], imp) {
					out[p] = append(out[p], imp)
				}
			}
		}
	}
	return out
}

// TestImports_NoPackageImportsUpward: every package of the module has a
// layer, and none imports a package of its own layer or a higher one.
func TestImports_NoPackageImportsUpward(t *testing.T) {
	got := imports(t)
	if len(got) < len(layers)/2 {
		t.Fatalf("go list found %d packages of the module, the table places %d: not run from the module?", len(got), len(layers))
	}
	var pkgs []string
	for p := range got {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		lp, ok := layers[p]
		if !ok {
			t.Errorf("package %s has no layer: place it in internal/layering's table and in docs/explanation/architecture.md", p)
			continue
		}
		for _, imp := range got[p] {
			li, ok := layers[imp]
			if !ok {
				continue // reported as a package of its own
			}
			if li >= lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers (docs/explanation/architecture.md, \"Import direction\")", p, lp, imp, li)
			}
		}
	}
	for p := range layers {
		if _, ok := got[p]; !ok {
			t.Errorf("internal/layering's table places %s, which go list does not find: remove it", p)
		}
	}
}
