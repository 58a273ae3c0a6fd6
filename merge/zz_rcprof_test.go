package merge

import "testing"

func TestZZRCProf(t *testing.T) {
	run, err := Load("/tmp/syn", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	pass, err := Prepare(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rc := NewRootCauseStream(run, RootCauseOptions{}, pass.SiteName())
	pass.AddStreamSink(rc)
	if _, err := pass.Run(); err != nil {
		t.Fatal(err)
	}
	r := rc.Result()
	t.Logf("waits %d total %v causes %d regions %d sites %d", r.WaitStates, r.TotalWaitNS, len(r.Causes), len(rc.regions), len(rc.sitePC))
}
