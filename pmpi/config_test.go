package main

import (
	"github.com/gclock/gclock/trace"
	"math"
	"reflect"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfig_Defaults(t *testing.T) {
	c, err := loadConfig(env(nil), []string{"PATH=/bin", "GCLOCK_DIR=/x"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Timer != "auto" || c.Buffer != defaultBufferEvents || c.Codec != trace.CodecS2 || c.NodeSize != 0 || c.Pairs != nil || c.Quiet {
		t.Errorf("defaults: %+v", c)
	}
	if !reflect.DeepEqual(c.Echo, map[string]string{"GCLOCK_DIR": "/x"}) {
		t.Errorf("config echo %v, want only GCLOCK_* variables", c.Echo)
	}
}

func TestLoadConfig_Codec(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want trace.Codec
	}{{"", trace.CodecS2}, {"s2", trace.CodecS2}, {"zstd", trace.CodecZstd}, {" ZSTD ", trace.CodecZstd}} {
		c, err := loadConfig(env(map[string]string{"GCLOCK_CODEC": tc.v}), nil)
		if err != nil || c.Codec != tc.want {
			t.Errorf("GCLOCK_CODEC=%q: codec %v, err %v; want %v", tc.v, c.Codec, err, tc.want)
		}
	}
}

func TestLoadConfig_CodecGivenAndCWrite(t *testing.T) {
	for _, tc := range []struct {
		codec, cwrite string
		given, cw     bool
	}{{"", "", false, true}, {"s2", "", true, true}, {"zstd", "0", true, false}, {"", " 1 ", false, true}, {"", "0", false, false}} {
		c, err := loadConfig(env(map[string]string{"GCLOCK_CODEC": tc.codec, "GCLOCK_CWRITE": tc.cwrite}), nil)
		if err != nil || c.CodecGiven != tc.given || c.CWrite != tc.cw {
			t.Errorf("GCLOCK_CODEC=%q GCLOCK_CWRITE=%q: given %v, CWrite %v, err %v; want %v, %v",
				tc.codec, tc.cwrite, c.CodecGiven, c.CWrite, err, tc.given, tc.cw)
		}
	}
}

func TestLoadConfig_Fsync(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{{"", false}, {"0", false}, {"1", true}, {" 1 ", true}} {
		c, err := loadConfig(env(map[string]string{"GCLOCK_FSYNC": tc.v}), nil)
		if err != nil || c.Fsync != tc.want {
			t.Errorf("GCLOCK_FSYNC=%q: Fsync %v, err %v; want %v", tc.v, c.Fsync, err, tc.want)
		}
	}
}

func TestLoadConfig_RejectsBadValues(t *testing.T) {
	for _, m := range []map[string]string{
		{"GCLOCK_TIMER": "sundial"},
		{"GCLOCK_BUFFER": "3"},
		{"GCLOCK_BUFFER": "many"},
		{"GCLOCK_CODEC": "lz4"},
		{"GCLOCK_NODE_SIZE": "0"},
		{"GCLOCK_FAKE_CLOCK": "5000"},
		{"GCLOCK_FAKE_CLOCK": "1:x"},
		{"GCLOCK_FAKE_CLOCK": "0:-1000000"},
		{"GCLOCK_CHECK_AFTER": "-1"},
		{"GCLOCK_CHECK_AFTER": "soon"},
		{"GCLOCK_CHECK_AFTER": "NaN"},
		{"GCLOCK_FSYNC": "yes"},
		{"GCLOCK_CWRITE": "on"},
	} {
		if _, err := loadConfig(env(m), nil); err == nil {
			t.Errorf("%v accepted", m)
		}
	}
}

func TestParseFake_PairsInOrder(t *testing.T) {
	p, err := trace.ParseFakeClock("5000000:100, -5000000:-100,0:0.5+step(10s,1ppm)")
	if err != nil {
		t.Fatal(err)
	}
	got := [][2]float64{}
	for _, in := range p {
		got = append(got, [2]float64{in.OffsetNS, in.DriftPPM})
	}
	want := [][2]float64{{5e6, 100}, {-5e6, -100}, {0, 0.5}}
	if !reflect.DeepEqual(got, want) || len(p[2].Terms) != 1 || p[2].Terms[0].Kind != "step" {
		t.Errorf("got %v (terms %+v), want %v and a step on node 2", got, p[2].Terms, want)
	}
}

func TestJobIDFromEnv_NamesSlurmJobAndLauncher(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OMPI_MCA_orte_ess_jobid": "123", "PMIX_NAMESPACE": "x"}, "123"},
		{map[string]string{"PMIX_NAMESPACE": "prterun-vm-1@1"}, "prterun-vm-1_1"},
		// srun: the same name whatever the --mpi plugin.
		{map[string]string{"SLURM_JOB_ID": "77", "SLURM_STEP_ID": "2"}, "slurm-77.2"},
		{map[string]string{"SLURM_JOB_ID": "77", "SLURM_STEP_ID": "2", "PMIX_NAMESPACE": "slurm.pmix.77.2"}, "slurm-77.2"},
		// mpirun in an allocation (no step in salloc's shell or sbatch's script).
		{map[string]string{"SLURM_JOB_ID": "78", "OMPI_MCA_orte_ess_jobid": "1526464513", "PMIX_NAMESPACE": "1522663425"}, "slurm-78-1526464513"},
		{nil, ""},
	} {
		if got := jobIDFromEnv(env(tc.env)); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestSrunSingleton_OnlyWhenAStepOfSeveralTasksSeesOneProcess(t *testing.T) {
	step := map[string]string{"SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "1"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		size int
		want bool
	}{
		{"singleton in a 2-task step", step, 1, true},
		{"the whole step in one world", step, 2, false},
		{"a 1-task step", map[string]string{"SLURM_STEP_NUM_TASKS": "1"}, 1, false},
		{"mpirun -np 1 in a step", map[string]string{"SLURM_STEP_NUM_TASKS": "2", "OMPI_COMM_WORLD_SIZE": "1"}, 1, false},
		{"no Slurm", nil, 1, false},
	} {
		n, id, ok := srunSingleton(env(tc.env), tc.size)
		if ok != tc.want || ok && (n != 2 || id != "1") {
			t.Errorf("%s: %d %q %v, want %v", tc.name, n, id, ok, tc.want)
		}
	}
}

func TestLoadConfig_CheckAfterSeconds(t *testing.T) {
	c, err := loadConfig(env(map[string]string{"GCLOCK_CHECK_AFTER": " 2.5 "}), nil)
	if err != nil || c.CheckAfter != 2.5 {
		t.Errorf("GCLOCK_CHECK_AFTER=2.5: %v, err %v", c.CheckAfter, err)
	}
}

func TestSyncRetryThreshold(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want float64
		ok   bool
	}{
		{"", defaultSyncRetryUS * 1e-6, true},
		{"0", 0, true},
		{"2.5", 2.5e-6, true},
		{"-1", 0, false},
		{"x", 0, false},
	} {
		got, err := syncRetryThreshold(env(map[string]string{syncRetryEnvVariable: tc.v}))
		if (err == nil) != tc.ok || (tc.ok && math.Abs(got-tc.want) > 1e-18) {
			t.Errorf("%s=%q: %g, err %v; want %g ok=%v", syncRetryEnvVariable, tc.v, got, err, tc.want, tc.ok)
		}
	}
}

func TestSyncConfig_MPIWtimeMeasuresWithinNodes(t *testing.T) {
	t.Setenv("GCLOCK_SYNC_INTRA", "")
	cfg, _, auto, err := syncConfig(3, "mpi_wtime")
	if err != nil || !auto || cfg.Intra != "hca3" || cfg.NodeID != 3 {
		t.Errorf("mpi_wtime: intra %q auto %v node %d err %v; want hca3, true, 3", cfg.Intra, auto, cfg.NodeID, err)
	}
	cfg, _, auto, _ = syncConfig(0, "monotonic")
	if auto || cfg.Intra != "clockprop" {
		t.Errorf("monotonic: intra %q auto %v; want clockprop, false", cfg.Intra, auto)
	}
	t.Setenv("GCLOCK_SYNC_INTRA", "clockprop")
	cfg, _, auto, _ = syncConfig(0, "mpi_wtime")
	if auto || cfg.Intra != "clockprop" {
		t.Errorf("mpi_wtime with GCLOCK_SYNC_INTRA=clockprop: intra %q auto %v; the user's choice must win", cfg.Intra, auto)
	}
}
