package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// cPrograms are the C microbenchmarks in bench/c.
var cPrograms = []string{"timercost", "barrier_self", "p2p_self", "allreduce", "empty", "halo"}

// compileC builds bench/c/*.c with mpicc into the work directory.
func (c *Config) compileC() {
	c.bins, c.binsE = map[string]string{}, map[string]error{}
	if _, err := exec.LookPath("mpicc"); err != nil {
		for _, p := range cPrograms {
			c.binsE[p] = errors.New("mpicc not found (make setup installs Open MPI)")
		}
		return
	}
	dir := filepath.Join(c.Work, "bin")
	os.MkdirAll(dir, 0o755)
	for _, p := range cPrograms {
		out := filepath.Join(dir, p)
		src := filepath.Join(c.Root, "bench", "c", p+".c")
		if _, err := runCmd(time.Minute, c.Root, nil, "mpicc", "-std=c11", "-O2", "-Wall", "-Wextra", "-o", out, src); err != nil {
			c.binsE[p] = fmt.Errorf("compiling %s: %w", p, err)
			continue
		}
		c.bins[p] = out
	}
}

func (c *Config) bin(name string) (string, error) {
	if b, ok := c.bins[name]; ok {
		return b, nil
	}
	return "", c.binsE[name]
}

// libErr says why the library cannot be preloaded, or nil.
func (c *Config) libErr() error {
	if _, err := os.Stat(c.Lib); err != nil {
		return fmt.Errorf("%s not built (make lib)", rel(c.Root, c.Lib))
	}
	return nil
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// runDir makes a fresh directory for one traced run; the library writes its
// gclock-trace/<job>/ there (ranks inherit mpirun's working directory).
func (c *Config) runDir(tag string) string {
	d, err := os.MkdirTemp(c.Work, tag+"-")
	if err != nil {
		panic(err) // the work directory is ours; failing here is a broken machine
	}
	return d
}

// preloadEnv is the environment of a traced rank writing under dir.
func (c *Config) preloadEnv(dir string, extra ...string) []string {
	return append([]string{"LD_PRELOAD=" + c.Lib, "GCLOCK_DIR=" + dir}, extra...)
}
