// Package doccheck holds the documentation's own checks: every relative
// link of README.md and docs/ points at a file that exists, and no user
// page carries a dated individual run (those belong in docs/benchmarks.md
// and docs/history.md).
package doccheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func mdFiles(t *testing.T) []string {
	out, err := exec.Command("git", "-C", root(), "ls-files", "README.md", "docs/*.md", "docs/**/*.md", "examples/*.md", "examples/**/*.md").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	return strings.Fields(string(out))
}

var linkRE = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)

// TestDocs_RelativeLinksResolve: every [text](path) that is not a URL
// names a file or directory that exists.
func TestDocs_RelativeLinksResolve(t *testing.T) {
	for _, f := range mdFiles(t) {
		b, err := os.ReadFile(filepath.Join(root(), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p := filepath.Join(root(), filepath.Dir(f), target)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link to %s: no such file", f, target)
			}
		}
	}
}

// datedRun is a date with a time of day: an individual run's timestamp.
var datedRun = regexp.MustCompile(`20[0-9]{2}-[0-9]{2}-[0-9]{2}[ T,]+[0-9]{1,2}:[0-9]{2}`)

// TestDocs_UserPagesHaveNoDatedRuns: dated individual runs live in
// docs/benchmarks.md, docs/history.md and the decisions, not in the
// README, guides, reference or explanation pages.
func TestDocs_UserPagesHaveNoDatedRuns(t *testing.T) {
	for _, f := range mdFiles(t) {
		base := filepath.Base(f)
		if base == "benchmarks.md" || base == "history.md" || base == "decisions.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root(), f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if datedRun.MatchString(line) {
				t.Errorf("%s:%d: a dated run on a user page (move it to docs/history.md): %.120s", f, i+1, line)
			}
		}
	}
}
