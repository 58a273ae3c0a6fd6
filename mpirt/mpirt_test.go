package mpirt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crossedSizes are the message sizes of TestSend_CrossedSendsCompleteWhileAGoroutineReceives:
// around eagerMax (1024), around Open MPI's shared-memory eager limit (4080
// bytes, 30 events of 136 bytes, hung tracemerge), and large ones.
var crossedSizes = []int{0, 16, 1024, 1025, 4040, 4080, 4096, 4097, 65536, 1 << 20}

// TestSend_CrossedSendsCompleteWhileAGoroutineReceives runs itself under
// mpirun with 2 processes; each sends the other one message of every size
// while a goroutine of its own receives the peer's, as tracemerge's
// partitioned pass does (a listener per stream). A Send that waits for the
// receiver inside a blocking MPI_Send holds the MPI thread, so neither
// process's receive is ever posted and both wait forever: a child that
// has not finished a size within 20 s says which and exits 3.
func TestSend_CrossedSendsCompleteWhileAGoroutineReceives(t *testing.T) {
	if LaunchedSize() != 0 {
		crossedChild()
		return
	}
	for _, tc := range []struct {
		name, launcher string
		args           []string
	}{
		{"Open MPI", "mpirun", []string{"--oversubscribe", "-np", "2"}},
		{"MPICH", "mpiexec.mpich", []string{"-n", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			launcher, err := exec.LookPath(tc.launcher)
			if err != nil {
				t.Fatalf("%s not found on PATH: this test runs 2 MPI processes; install Open MPI and MPICH (`make setup`): %v", tc.launcher, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			args := append(tc.args, os.Args[0],
				"-test.run", "^TestSend_CrossedSendsCompleteWhileAGoroutineReceives$", "-test.count=1")
			cmd := exec.CommandContext(ctx, launcher, args...)
			cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
			cmd.WaitDelay = 10 * time.Second
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err = cmd.Run()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatalf("%s did not end within 90 s (crossed sends hung):\n%s", tc.launcher, out.String())
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.launcher, err, out.String())
			}
			for _, r := range []string{"process 0: crossed sends ok", "process 1: crossed sends ok"} {
				if !strings.Contains(out.String(), r) {
					t.Errorf("output lacks %q:\n%s", r, out.String())
				}
			}
		})
	}
}

// crossedChild is one process of the test above.
func crossedChild() {
	w, err := Init("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpirt test:", err)
		os.Exit(2)
	}
	peer := 1 - w.Rank
	for i, n := range crossedSizes {
		tag := 100 + i
		msg := bytes.Repeat([]byte{byte(w.Rank + 1)}, n)
		got := make([]byte, n)
		recvd := make(chan error, 1)
		go func() { recvd <- w.Recv(peer, tag, got) }()
		sent := make(chan error, 1)
		go func() { sent <- w.Send(peer, tag, msg) }()
		timeout := time.After(20 * time.Second)
		for _, c := range []chan error{sent, recvd} {
			select {
			case err := <-c:
				if err != nil {
					fmt.Fprintf(os.Stderr, "process %d: %d bytes: %v\n", w.Rank, n, err)
					os.Exit(3)
				}
			case <-timeout:
				fmt.Fprintf(os.Stderr, "process %d: crossed sends of %d bytes hung (no progress in 20 s)\n", w.Rank, n)
				os.Exit(3)
			}
		}
		if !bytes.Equal(got, bytes.Repeat([]byte{byte(peer + 1)}, n)) {
			fmt.Fprintf(os.Stderr, "process %d: %d bytes: wrong content received\n", w.Rank, n)
			os.Exit(3)
		}
	}
	if err := w.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "mpirt test:", err)
		os.Exit(2)
	}
	fmt.Printf("process %d: crossed sends ok\n", w.Rank)
}
