package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/reference/tracemerge-cli.md")

// cliDoc is docs/reference/tracemerge-cli.md: the usage text the command
// prints, so that the page cannot drift from the flags.
func cliDoc() string {
	return "<!-- Generated from cmd/tracemerge's usage text by `go test ./cmd/tracemerge -run TestCLI_ReferencePageIsGenerated -update`. -->\n" +
		"# tracemerge command line\n\n" +
		"What `tracemerge --help` prints. The outputs and their fields: [outputs.md](outputs.md); how the analysis works: [../explanation/tracemerge.md](../explanation/tracemerge.md).\n\n" +
		"```\n" + usageText + "```\n"
}

// TestCLI_ReferencePageIsGenerated: docs/reference/tracemerge-cli.md is
// the command's own usage text (go test -update rewrites it).
func TestCLI_ReferencePageIsGenerated(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "reference", "tracemerge-cli.md")
	if *updateDocs {
		if err := os.WriteFile(path, []byte(cliDoc()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/tracemerge -run TestCLI_ReferencePageIsGenerated -update)", err)
	}
	if string(got) != cliDoc() {
		t.Error("docs/reference/tracemerge-cli.md differs from the usage text: run go test ./cmd/tracemerge -run TestCLI_ReferencePageIsGenerated -update")
	}
}
