package main

import (
	"reflect"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfig_Defaults(t *testing.T) {
	c, err := loadConfig(env(nil), []string{"PATH=/bin", "GCLOCK_X=1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Timer != "monotonic" || c.Buffer != defaultBufferEvents || c.NodeSize != 0 || c.Pairs != nil || c.Quiet {
		t.Errorf("defaults: %+v", c)
	}
	if !reflect.DeepEqual(c.Echo, map[string]string{"GCLOCK_X": "1"}) {
		t.Errorf("config echo %v, want only GCLOCK_* variables", c.Echo)
	}
}

func TestLoadConfig_RejectsBadValues(t *testing.T) {
	for _, m := range []map[string]string{
		{"GCLOCK_TIMER": "sundial"},
		{"GCLOCK_BUFFER": "3"},
		{"GCLOCK_BUFFER": "many"},
		{"GCLOCK_NODE_SIZE": "0"},
		{"GCLOCK_FAKE_CLOCK": "5000"},
		{"GCLOCK_FAKE_CLOCK": "1:x"},
		{"GCLOCK_FAKE_CLOCK": "0:-1000000"},
	} {
		if _, err := loadConfig(env(m), nil); err == nil {
			t.Errorf("%v accepted", m)
		}
	}
}

func TestParseFake_PairsInOrder(t *testing.T) {
	p, err := parseFake("5000000:100, -5000000:-100,0:0.5")
	if err != nil {
		t.Fatal(err)
	}
	want := []fakePair{{5e6, 100}, {-5e6, -100}, {0, 0.5}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %v, want %v", p, want)
	}
}

func TestJobIDFromEnv_PrefersLauncherIDsAndSanitizes(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OMPI_MCA_orte_ess_jobid": "123", "PMIX_NAMESPACE": "x"}, "123"},
		{map[string]string{"PMIX_NAMESPACE": "prterun-vm-1@1"}, "prterun-vm-1_1"},
		{map[string]string{"SLURM_JOB_ID": "77", "SLURM_STEP_ID": "2"}, "77.2"},
		{nil, ""},
	} {
		if got := jobIDFromEnv(env(tc.env)); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
}
