package main

import (
	"fmt"
	"io"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/postmortem"
)

// writePostMortem prints the post-mortem section (docs/guide/crash-hang.md) of
// tracemerge info, nothing when the run ended cleanly.
func writePostMortem(w io.Writer, pm *datamodel.PostMortem) {
	if pm == nil {
		return
	}
	fmt.Fprintln(w, "POST-MORTEM: the run did not end cleanly")
	for _, l := range postmortem.Lines(pm) {
		fmt.Fprintf(w, "  %s\n", oneLine(l))
	}
	fmt.Fprintln(w)
}
