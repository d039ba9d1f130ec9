package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxSettings: the sandbox settings have defaults and come from
// the file and the environment like the others; bad values are named.
func TestSandboxSettings(t *testing.T) {
	s, err := Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.RestartAttempts != 3 || s.RestartDelay != 100*time.Millisecond || s.RestartWindow != 10*time.Second || s.JobMemory != 2048 {
		t.Errorf("defaults %+v", s.Sandbox)
	}
	file := filepath.Join(t.TempDir(), "host.yaml")
	if err := os.WriteFile(file, []byte("restart-attempts: 5\nrestart-delay: 1ms\njob-memory: 256\ndata-roots: [/data, /out]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Load(file, []string{"SLUICE_RESTART_WINDOW=1m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.RestartAttempts != 5 || s.RestartDelay != time.Millisecond || s.RestartWindow != time.Minute ||
		s.JobMemoryBytes() != 256<<20 || strings.Join(s.DataRoots, ",") != "/data,/out" {
		t.Errorf("loaded %+v", s.Sandbox)
	}
	_, err = Load("", []string{"SLUICE_RESTART_ATTEMPTS=-1", "SLUICE_JOB_MEMORY=-5"}, nil)
	if err == nil || !strings.Contains(err.Error(), "setting restart-attempts") || !strings.Contains(err.Error(), "setting job-memory") {
		t.Errorf("bad values: %v", err)
	}
}
