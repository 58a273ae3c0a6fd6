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

// anyDate is a calendar date (YYYY-MM-DD): on a user page it marks a
// dated run or a dated fact that a version number states better.
var anyDate = regexp.MustCompile(`20[0-9]{2}-[01][0-9]-[0-3][0-9]`)

// dateAllowed lists the lines of user pages that may hold a date, by page
// and a substring of the line. Keep it small and say why for each entry;
// it is empty now: every user page states versions and current figures.
var dateAllowed = map[string][]string{}

// userPage reports whether f is a user page: README.md, docs/guide,
// docs/reference and docs/explanation except the decisions (dated by
// nature). docs/benchmarks.md and docs/history.md hold the dated runs.
func userPage(f string) bool {
	if f == "README.md" {
		return true
	}
	if f == "docs/explanation/decisions.md" {
		return false
	}
	for _, dir := range []string{"docs/guide/", "docs/reference/", "docs/explanation/"} {
		if strings.HasPrefix(f, dir) {
			return true
		}
	}
	return false
}

// TestDocs_UserPagesHaveNoDates: a user page states the current figure
// with the command that reproduces it; no line of it carries a calendar
// date (runs, test builds and the story of a figure go to
// docs/history.md, format and package changes are named by version).
func TestDocs_UserPagesHaveNoDates(t *testing.T) {
	pages := 0
	for _, f := range mdFiles(t) {
		if !userPage(f) {
			continue
		}
		pages++
		b, err := os.ReadFile(filepath.Join(root(), f))
		if err != nil {
			t.Fatal(err)
		}
	lines:
		for i, line := range strings.Split(string(b), "\n") {
			if !anyDate.MatchString(line) {
				continue
			}
			for _, ok := range dateAllowed[f] {
				if strings.Contains(line, ok) {
					continue lines
				}
			}
			t.Errorf("%s:%d: a date on a user page (state the current figure and its command; move the dated run to docs/history.md): %.120s", f, i+1, line)
		}
	}
	if pages < 10 {
		t.Fatalf("found %d user pages; the page list (git ls-files) looks wrong", pages)
	}
}

// TestDocs_UserPageRule: the rule above classifies the pages as meant.
func TestDocs_UserPageRule(t *testing.T) {
	for _, tc := range []struct {
		file string
		user bool
	}{
		{"README.md", true},
		{"docs/guide/slurm.md", true},
		{"docs/reference/trace-format.md", true},
		{"docs/explanation/recorder.md", true},
		{"docs/explanation/decisions.md", false},
		{"docs/benchmarks.md", false},
		{"docs/history.md", false},
		{"examples/README.md", false},
	} {
		if got := userPage(tc.file); got != tc.user {
			t.Errorf("userPage(%q) = %v, want %v", tc.file, got, tc.user)
		}
	}
	if !anyDate.MatchString("run of 2026-11-28") || anyDate.MatchString("v4.1.4 and 1.2.3-4") {
		t.Errorf("anyDate matches the wrong strings")
	}
}
