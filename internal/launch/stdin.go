// Package launch holds what every caller of mpirun and mpiexec in this
// repository (tests, benchmarks) must do the same way.
package launch

import (
	"fmt"
	"os"
	"os/exec"
)

// HoldStdin gives cmd a standard input that stays open, without data,
// until the returned release function is called after the command ended.
//
// With an input that ends at once (/dev/null, what os/exec gives by
// default), MPICH's hydra launcher can fail rank 0's MPI_Init: mpiexec
// forwards the end of input to the proxy, and a proxy that gets it before
// it launched the ranks closes the descriptor it keeps for rank 0's stdin,
// which is still 0, i.e. its own stdin. The PMI socket it makes next is
// then descriptor 0, rank 0 gets PMI_FD=0, and that descriptor is replaced
// by rank 0's stdin pipe before exec ("write_line error; fd=0 ... Unable to
// write to PMI_fd", "PMI_Get_appnum returned -1"; seen once in CI with
// mpiexec.mpich 4.0.2). A terminal's input does not end either.
func HoldStdin(cmd *exec.Cmd) (release func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe for %s: %w", cmd.Path, err)
	}
	cmd.Stdin = r
	return func() {
		r.Close()
		w.Close()
	}, nil
}
