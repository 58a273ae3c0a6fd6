package settings

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/reference/settings.md")

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// TestSettings_EveryNameInTheCodeIsListed: every GCLOCK_* name the code
// (Go, C) uses is in All, and every name in All is used.
func TestSettings_EveryNameInTheCodeIsListed(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "*.go", "*.c", "*.h").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	re := regexp.MustCompile(`\bGCLOCK_[A-Z0-9_]*[A-Z0-9]\b`)
	used := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "internal/settings/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllString(string(b), -1) {
			used[m] = true
		}
	}
	listed := map[string]bool{}
	for _, s := range All {
		if listed[s.Name] {
			t.Errorf("%s listed twice", s.Name)
		}
		listed[s.Name] = true
		if !used[s.Name] {
			t.Errorf("%s is listed but no code reads it", s.Name)
		}
	}
	var missing []string
	for n := range used {
		if !listed[n] && !notSettings[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("used in the code but not in internal/settings: %v", missing)
	}
}

// notSettings are GCLOCK_-prefixed names in the code that are not
// environment settings.
var notSettings = map[string]bool{}

// TestSettings_ReferencePageIsGenerated: docs/reference/settings.md is
// what Markdown generates (go test -update rewrites it).
func TestSettings_ReferencePageIsGenerated(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "reference", "settings.md")
	want := Markdown()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/settings -update)", err)
	}
	if string(got) != want {
		t.Errorf("docs/reference/settings.md differs from internal/settings: run go test ./internal/settings -update")
	}
}
