package viz

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/postmortem"
)

// writePostMortemText writes the post-mortem section (docs/guide/crash-hang.md)
// at the top of the text report, nothing when the run ended cleanly.
func writePostMortemText(w *bufio.Writer, pm *datamodel.PostMortem) {
	if pm == nil {
		return
	}
	line := strings.Repeat("#", 78)
	fmt.Fprintln(w, line)
	fmt.Fprintln(w, "## POST-MORTEM: the run did not end cleanly")
	for _, l := range postmortem.Lines(pm) {
		fmt.Fprintf(w, "## %s\n", term(l))
	}
	fmt.Fprintln(w, line)
}
