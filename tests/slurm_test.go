package tests

// Slurm for real (issue 39 §2): a one-node Slurm cluster on 127.0.0.1,
// started by the test from Debian's slurmctld and slurmd (installed by
// scripts/setup.sh when missing) with its own slurm.conf, ports, state
// and spool in a temporary directory, and stopped afterwards. MPI
// programs run under the preload through srun (direct launch) and through
// mpirun inside salloc and sbatch allocations; tracemerge runs in
// parallel under srun. docs/guide/slurm.md states what these tests show.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gclock/gclock/trace"
)

// slurmPkgs are Debian's packages the Slurm tests install when missing
// (munge comes as their dependency; the cluster uses auth/none).
const slurmPkgs = "slurmctld slurmd slurm-client"

// slurmBin finds a Slurm program: on PATH, or in /usr/sbin (the daemons,
// not on a non-root PATH).
func slurmBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found on PATH or in /usr/sbin", name)
	}
	return p, nil
}

// ensureSlurm installs Slurm through scripts/setup.sh when a program is
// missing; it fails the test, saying what to install, when it cannot.
func ensureSlurm(t *testing.T) map[string]string {
	t.Helper()
	names := []string{"slurmctld", "slurmd", "srun", "salloc", "sbatch", "scontrol", "sinfo", "squeue", "scancel"}
	find := func() (map[string]string, error) {
		bins := map[string]string{}
		for _, n := range names {
			p, err := slurmBin(n)
			if err != nil {
				return nil, err
			}
			bins[n] = p
		}
		return bins, nil
	}
	if bins, err := find(); err == nil {
		return bins
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "setup.sh"))
	cmd.Env = append(os.Environ(), "SETUP_EXTRA="+slurmPkgs)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Slurm is not installed and scripts/setup.sh could not install it (%v):\n%s\nthe Slurm tests need Debian's %s: run `make test-setup` as root or `sudo apt-get install -y %s`", err, out, slurmPkgs, slurmPkgs)
	}
	bins, err := find()
	if err != nil {
		t.Fatalf("scripts/setup.sh installed %s, but %v", slurmPkgs, err)
	}
	return bins
}

// slurmCluster is a running one-node cluster.
type slurmCluster struct {
	bins    map[string]string
	dir     string // state, spool, logs, slurm.conf
	conf    string
	node    string
	daemons []*exec.Cmd
}

// env is what a client command needs to reach this cluster.
func (c *slurmCluster) env() []string { return []string{"SLURM_CONF=" + c.conf} }

// freePorts returns n TCP ports free on 127.0.0.1 (held open together, so
// they differ).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startSlurm starts slurmctld and slurmd in the foreground, each a child
// of the test, and waits until the node is idle. Cleanup cancels every job
// and stops both, also when the test fails.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	needSetup(t)
	bins := ensureSlurm(t)
	dir, err := os.MkdirTemp("", "gclock-slurm-") // short: slurmd's sockets live in its spool
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Fatal("the Slurm test starts slurmctld and slurmd with SlurmUser=root: run it as root (as CI does)")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".") // slurmctld and slurmd compare the short name
	c := &slurmCluster{bins: bins, dir: dir, conf: filepath.Join(dir, "slurm.conf"), node: host}
	t.Cleanup(func() {
		c.stop(t)
		os.RemoveAll(dir)
	})
	for _, d := range []string{"state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ports := freePorts(t, 2)
	p := func(name string) string { return filepath.Join(dir, name) }
	// No cgroups (a container or VM may have none to give): processes are
	// tracked by their parent pids; no accounting, no task binding.
	conf := fmt.Sprintf(`ClusterName=gclocktest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[4]s
SlurmdSpoolDir=%[5]s
SlurmctldPidFile=%[6]s
SlurmdPidFile=%[7]s
SlurmctldLogFile=%[8]s
SlurmdLogFile=%[9]s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[10]d State=UNKNOWN
PartitionName=debug Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
`, host, ports[0], ports[1], p("state"), p("spool"), p("slurmctld.pid"), p("slurmd.pid"),
		p("log/slurmctld.log"), p("log/slurmd.log"), runtime.NumCPU())
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") {
			env = append(env, kv)
		}
	}
	env = append(env, c.env()...)
	for _, argv := range [][]string{{bins["slurmctld"], "-D", "-i", "-f", c.conf}, {bins["slurmd"], "-D", "-N", host, "-f", c.conf}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Dir = dir
		out, err := os.Create(p("log/" + filepath.Base(argv[0]) + ".out"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			out.Close()
			t.Fatalf("starting %v: %v", argv, err)
		}
		out.Close()
		c.daemons = append(c.daemons, cmd)
	}
	// Ready when the node is idle.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := c.command(bins["sinfo"], "-h", "-n", host, "-o", "%t").Output()
		if strings.TrimSpace(string(out)) == "idle" {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Slurm node %s is not idle 30 s after starting slurmctld and slurmd (sinfo: %q):\n%s", host, out, c.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// command is a client command of this cluster (used outside runCmd).
func (c *slurmCluster) command(argv ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(mpiBaseEnv(), c.env()...)
	return cmd
}

// logs returns the daemons' log files, for failure messages.
func (c *slurmCluster) logs() string {
	var b strings.Builder
	names, _ := filepath.Glob(filepath.Join(c.dir, "log", "*"))
	for _, n := range names {
		data, _ := os.ReadFile(n)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", n, data)
	}
	return b.String()
}

// stop cancels every job of the cluster, then stops the daemons (SIGTERM,
// after 10 s SIGKILL).
func (c *slurmCluster) stop(t *testing.T) {
	if len(c.daemons) == 0 {
		return
	}
	if out, err := c.command(c.bins["squeue"], "-h", "-o", "%i").Output(); err == nil {
		for _, id := range strings.Fields(string(out)) {
			_ = c.command(c.bins["scancel"], id).Run()
		}
	}
	for _, d := range c.daemons {
		_ = d.Process.Signal(syscall.SIGTERM)
	}
	for _, d := range c.daemons {
		done := make(chan struct{})
		go func() { _ = d.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop 10 s after SIGTERM; killed", d.Path)
			_ = d.Process.Kill()
			<-done
		}
	}
	c.daemons = nil
}

// waitJob waits until job id has ended and returns `scontrol show job`.
func (c *slurmCluster) waitJob(t *testing.T, id string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		out, err := c.command(c.bins["scontrol"], "show", "job", id).CombinedOutput()
		if err != nil {
			t.Fatalf("scontrol show job %q: %v\n%s", id, err, out)
		}
		s := string(out)
		if !strings.Contains(s, "JobState=PENDING ") && !strings.Contains(s, "JobState=RUNNING ") &&
			!strings.Contains(s, "JobState=COMPLETING ") && !strings.Contains(s, "JobState=CONFIGURING ") {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s has not ended after %v:\n%s", id, limit, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// slurmRunDirs returns the run directories under dir/gclock-trace.
func slurmRunDirs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "gclock-trace"))
	if err != nil {
		t.Fatalf("no trace written: %v", err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// overcommit lets 2 tasks share fewer cores (a 1-core CI machine).
func overcommit() []string {
	if runtime.NumCPU() < 2 {
		return []string{"--overcommit"}
	}
	return nil
}

// checkSlurmRun checks one traced run of progs/collectives.c on np tasks:
// its directory's name matches nameRE, whose first group is the Slurm job
// id, a job of this cluster named jobName; it holds one rank file per task
// and nothing else; the events are exactly the program's calls; the
// merge matches every collective instance.
func checkSlurmRun(t *testing.T, c *slurmCluster, m *mpiImpl, runDir, expectDir string, np int, nameRE *regexp.Regexp, jobName string) {
	t.Helper()
	name := filepath.Base(runDir)
	g := nameRE.FindStringSubmatch(name)
	if g == nil {
		t.Fatalf("run directory %q does not match %s", name, nameRE)
	}
	out, err := c.command(c.bins["scontrol"], "show", "job", g[1]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "JobId="+g[1]+" JobName="+jobName+"\n") {
		t.Errorf("run %s: `scontrol show job %s` does not show job %s named %s (%v):\n%s", name, g[1], g[1], jobName, err, out)
	}
	files := listDir(t, runDir)
	want := make([]string, np)
	for r := range want {
		want[r] = trace.RankFileName(r)
	}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("run %s holds %v, want one rank file per task %v", name, files, want)
	}
	traces := readTraces(t, runDir, np)
	for r, rt := range traces {
		if rt.Meta.Header.JobID != name {
			t.Errorf("rank %d's header names job %q, its directory is %q", r, rt.Meta.Header.JobID, name)
		}
	}
	checkCollectives(t, m, traces, expectDir, np)
	// Every collective instance, counted from the traces: (comm id, seq)
	// of the shared communicators, each call on MPI_COMM_SELF.
	type key struct {
		id  uint64
		seq uint32
	}
	inst := map[key]bool{}
	self := 0
	for _, rt := range traces {
		for _, ev := range withoutFlush(rt.Events) {
			cm, _ := rt.Meta.CommByLocal(ev.Comm)
			if cm != nil && cm.ID == trace.CommSelfID {
				self++
			} else if cm != nil {
				inst[key{cm.ID, ev.Seq}] = true
			}
		}
	}
	a := analyzeDir(t, runDir)
	if a.Instances != len(inst)+self || a.Incomplete != 0 || len(a.Problems) != 0 {
		t.Errorf("tracemerge of %s: %d instances, %d incomplete, problems %q; the traces hold %d instances (%d on shared comms, %d on MPI_COMM_SELF)",
			name, a.Instances, a.Incomplete, a.Problems, len(inst)+self, len(inst), self)
	}
}

// TestSlurm_TracesSrunAndMpirunJobsAndMergesInParallel: on a one-node
// cluster, (a) srun launches MPI programs under the preload (Open MPI with
// --mpi=pmix, MPICH with --mpi=pmi2: output unchanged, every call
// recorded, every instance matched; the combinations that cannot work
// show their error or the recorder's warning), (b) mpirun inside salloc
// and sbatch allocations, (c) tracemerge runs in parallel under srun and
// writes the serial run's outputs.
func TestSlurm_TracesSrunAndMpirunJobsAndMergesInParallel(t *testing.T) {
	start := time.Now()
	c := startSlurm(t)
	t.Logf("Slurm installed and started in %v", time.Since(start).Round(time.Millisecond))
	ompi, mpch := openMPI, mpich(t)
	// The plugins srun offers (docs/guide/slurm.md: which --mpi).
	if r := runCmd(t, t.TempDir(), c.env(), "srun", "--mpi=list"); r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "pmix") || !strings.Contains(r.Stdout+r.Stderr, "pmi2") {
		t.Fatalf("srun --mpi=list exited %d and does not list both pmix and pmi2:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	srunRE := regexp.MustCompile(`^slurm-(\d+)\.0$`)
	for _, tc := range []struct {
		m   *mpiImpl
		mpi string
	}{{ompi, "pmix"}, {mpch, "pmi2"}} {
		t.Run("srun/"+tc.m.Name+"/"+tc.mpi, func(t *testing.T) {
			dir := t.TempDir()
			argv := append([]string{"srun", "-n", "2", "--mpi=" + tc.mpi}, overcommit()...)
			argv = append(argv, "--export=ALL,LD_PRELOAD="+tc.m.Lib, tc.m.prog(t, "collectives"), dir)
			r := runCmd(t, dir, c.env(), argv...)
			if r.Code != 0 {
				t.Fatalf("%s exited %d:\n%s", strings.Join(argv, " "), r.Code, r.Stderr)
			}
			// The program's output is that of a run without the preload
			// (its lines sorted: srun interleaves the tasks').
			plainDir := t.TempDir()
			plainArgv := append([]string{"srun", "-n", "2", "--mpi=" + tc.mpi}, overcommit()...)
			plain := runCmd(t, plainDir, c.env(), append(plainArgv, tc.m.prog(t, "collectives"), plainDir)...)
			if plain.Code != 0 || sortedLines(plain.Stdout) != sortedLines(r.Stdout) || plain.Stdout == "" {
				t.Errorf("without the preload: exit %d, stdout %q; with it %q", plain.Code, plain.Stdout, r.Stdout)
			}
			runs := slurmRunDirs(t, dir)
			if len(runs) != 1 {
				t.Fatalf("one srun wrote runs %v, want one", runs)
			}
			checkSlurmRun(t, c, tc.m, filepath.Join(dir, "gclock-trace", runs[0]), dir, 2, srunRE, "collectives")
		})
	}
	// Debian's Open MPI has no PMI-1/2 client: it stops in MPI_Init with
	// its own explanation.
	for _, plugin := range []string{"pmi2", "none"} {
		t.Run("srun/openmpi/"+plugin+"-fails-clearly", func(t *testing.T) {
			dir := t.TempDir()
			argv := append([]string{"srun", "-n", "2", "--mpi=" + plugin}, overcommit()...)
			argv = append(argv, "--export=ALL,LD_PRELOAD="+ompi.Lib, ompi.prog(t, "collectives"), dir)
			r := runCmd(t, dir, c.env(), argv...)
			const want = "OMPI was not built with SLURM's PMI support"
			if r.Code == 0 || !strings.Contains(r.Stderr, want) {
				t.Errorf("%s exited %d, want a failure saying %q:\n%s", strings.Join(argv, " "), r.Code, want, r.Stderr)
			}
		})
	}
	// Debian's MPICH has no PMIx client, and with none no process manager
	// at all: every task starts as a world of one. The recorder says so
	// and keeps the tasks' files apart.
	for _, plugin := range []string{"pmix", "none"} {
		t.Run("srun/mpich/"+plugin+"-singletons-warned", func(t *testing.T) {
			dir := t.TempDir()
			gdir := filepath.Join(dir, "given")
			const want = "srun started 2 tasks but MPI_COMM_WORLD has 1 process: the MPI library did not reach Slurm's process manager"
			for _, extra := range []string{"", ",GCLOCK_DIR=" + gdir} {
				argv := append([]string{"srun", "-n", "2", "--mpi=" + plugin}, overcommit()...)
				argv = append(argv, "--export=ALL,LD_PRELOAD="+mpch.Lib+extra, mpch.prog(t, "collectives"), dir)
				r := runCmd(t, dir, c.env(), argv...)
				if r.Code != 0 || strings.Count(r.Stderr, want) != 2 {
					t.Errorf("%s exited %d; want 0 and each task warning %q:\n%s", strings.Join(argv, " "), r.Code, want, r.Stderr)
				}
			}
			runs := slurmRunDirs(t, dir)
			if len(runs) != 2 || !regexp.MustCompile(`^slurm-\d+\.0\.task0$`).MatchString(runs[0]) || runs[1] != strings.TrimSuffix(runs[0], "0")+"1" {
				t.Fatalf("runs %v, want slurm-<job>.0.task0 and .task1", runs)
			}
			for _, run := range runs {
				if files := listDir(t, filepath.Join(dir, "gclock-trace", run)); len(files) != 1 || files[0] != trace.RankFileName(0) {
					t.Errorf("run %s holds %v, want only %s", run, files, trace.RankFileName(0))
				}
			}
			// With GCLOCK_DIR: a directory per task inside it.
			if files := listDir(t, gdir); strings.Join(files, " ") != "task0 task0/rank-00000.gct task1 task1/rank-00000.gct" {
				t.Errorf("GCLOCK_DIR holds %v, want task0/ and task1/ with one rank file each", files)
			}
		})
	}

	// (b) mpirun inside an allocation: the run is named after the Slurm
	// job and mpirun's own job id, so two mpirun in one job keep apart.
	allocRE := regexp.MustCompile(`^slurm-(\d+)-\d+$`)
	mpirunArgs := func(dir string) []string {
		return []string{"mpirun", "-np", "2", "-x", "LD_PRELOAD=" + ompi.Lib, ompi.prog(t, "collectives"), dir}
	}
	for _, tc := range []struct {
		m      *mpiImpl
		nameRE *regexp.Regexp
	}{
		{ompi, allocRE},
		// MPICH's mpiexec starts its proxies with srun: a job step.
		{mpch, regexp.MustCompile(`^slurm-(\d+)\.0$`)},
	} {
		t.Run("salloc/"+tc.m.Launcher, func(t *testing.T) {
			dir := t.TempDir()
			argv := append([]string{"salloc", "-n", "2", "-J", "gclock-salloc"}, overcommit()...)
			if tc.m == ompi {
				argv = append(argv, mpirunArgs(dir)...)
			} else {
				argv = append(argv, "mpiexec.mpich", "-np", "2", "-genv", "LD_PRELOAD", tc.m.Lib, tc.m.prog(t, "collectives"), dir)
			}
			r := runCmd(t, dir, c.env(), argv...)
			if r.Code != 0 {
				t.Fatalf("%s exited %d:\n%s", strings.Join(argv, " "), r.Code, r.Stderr)
			}
			runs := slurmRunDirs(t, dir)
			if len(runs) != 1 {
				t.Fatalf("one %s wrote runs %v, want one", tc.m.Launcher, runs)
			}
			checkSlurmRun(t, c, tc.m, filepath.Join(dir, "gclock-trace", runs[0]), dir, 2, tc.nameRE, "gclock-salloc")
		})
	}
	t.Run("sbatch/mpirun-twice", func(t *testing.T) {
		dir := t.TempDir()
		d1, d2 := filepath.Join(dir, "first"), filepath.Join(dir, "second")
		for _, d := range []string{d1, d2} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		script := "#!/bin/sh\nset -e\n" + strings.Join(mpirunArgs(d1), " ") + "\n" + strings.Join(mpirunArgs(d2), " ") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		// Not sbatch -W: it learns of the job's end up to 10 s late.
		argv := append(append([]string{"sbatch", "--parsable", "-n", "2"}, overcommit()...), "-o", filepath.Join(dir, "job.out"), "job.sh")
		r := runCmd(t, dir, c.env(), argv...)
		if r.Code != 0 {
			t.Fatalf("%s exited %d:\n%s", strings.Join(argv, " "), r.Code, r.Stderr)
		}
		state := c.waitJob(t, strings.TrimSpace(r.Stdout), 60*time.Second)
		out, _ := os.ReadFile(filepath.Join(dir, "job.out"))
		if !strings.Contains(state, "JobState=COMPLETED ") || !strings.Contains(state, " ExitCode=0:0") {
			t.Fatalf("the batch job did not complete with exit code 0:\n%s\njob output:\n%s", state, out)
		}
		runs := slurmRunDirs(t, dir)
		if len(runs) != 2 {
			t.Fatalf("two mpirun in one batch job wrote runs %v, want two", runs)
		}
		for i, run := range runs {
			// Both mpirun ran the same program: either's expect files
			// hold every run's calls.
			checkSlurmRun(t, c, ompi, filepath.Join(dir, "gclock-trace", run), []string{d1, d2}[i], 2, allocRE, "job.sh")
		}
		if a, b := allocRE.FindStringSubmatch(runs[0]), allocRE.FindStringSubmatch(runs[1]); a == nil || b == nil || a[1] != b[1] {
			t.Errorf("runs %v: want the same Slurm job id in both", runs)
		}
	})

	// (c) parallel tracemerge under srun: a synthetic 12-rank run with
	// collectives on two communicators and a halo exchange.
	dir := t.TempDir()
	tm := buildTracemerge(t, dir)
	runDir := synthRun(t, tm, dir, "run", "--events", "60000", "--ranks", "12", "--halo")
	args := []string{runDir, "--formats", "json,txt,csv"}
	files := []string{"imbalance.json", "p2p.json", "imbalance.txt", "events.csv"}
	serialOut := filepath.Join(dir, "serial")
	if r := runCmd(t, dir, nil, append([]string{tm, "-o", serialOut}, args...)...); r.Code != 0 {
		t.Fatalf("serial tracemerge exited %d:\n%s", r.Code, r.Stderr)
	}
	for _, tc := range []struct {
		mpi, want string
	}{
		{"pmix", "tracemerge: parallel analysis on 2 processes (openmpi)"},
		{"pmi2", "tracemerge: parallel analysis on 2 processes (mpich)"},
		{"none", "tracemerge: warning: srun started 2 tasks without an MPI process manager (--mpi=none?): analysing serially on task 0 alone"},
	} {
		t.Run("srun-tracemerge/"+tc.mpi, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+tc.mpi)
			argv := append(append([]string{"srun", "-n", "2", "--mpi=" + tc.mpi}, overcommit()...), append([]string{tm, "-o", out}, args...)...)
			r := runCmd(t, dir, c.env(), argv...)
			if r.Code != 0 || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("%s exited %d; want 0 and %q:\n%s", strings.Join(argv, " "), r.Code, tc.want, r.Stderr)
			}
			if n := strings.Count(r.Stdout, "gclock imbalance report"); n != 1 {
				t.Errorf("%d processes printed the report, want 1:\n%s", n, r.Stdout)
			}
			sameOutputs(t, serialOut, out, files, "under srun --mpi="+tc.mpi)
		})
	}
	t.Logf("the whole Slurm test took %v", time.Since(start).Round(time.Millisecond))
}
