package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
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
	_, err = Load("", []string{"SLUICE_RESTART_ATTEMPTS=-1", "SLUICE_JOB_MEMORY=-5", "SLUICE_FUEL_RATE=-1", "SLUICE_CALL_FUEL=-1"}, nil)
	for _, key := range []string{"restart-attempts", "job-memory", "fuel-rate", "call-fuel"} {
		if err == nil || !strings.Contains(err.Error(), "setting "+key) {
			t.Errorf("bad %s: %v", key, err)
		}
	}
}

// TestFuelRate: fuel-rate is off by default and one name in the file, the
// environment and a flag, the flag winning.
func TestFuelRate(t *testing.T) {
	s, err := Load("", nil, nil)
	if err != nil || s.FuelRate != 0 {
		t.Fatalf("default fuel-rate %d, %v; want 0 (no cap)", s.FuelRate, err)
	}
	file := filepath.Join(t.TempDir(), "host.yaml")
	if err := os.WriteFile(file, []byte("fuel-rate: 2000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(file, nil, nil); err != nil || s.FuelRate != 2e9 {
		t.Errorf("from the file: %d, %v", s.FuelRate, err)
	}
	if s, err = Load(file, []string{"SLUICE_FUEL_RATE=3000000000"}, nil); err != nil || s.FuelRate != 3e9 {
		t.Errorf("from the environment: %d, %v", s.FuelRate, err)
	}
	flags := pflag.NewFlagSet("run", pflag.ContinueOnError)
	flags.Int64("fuel-rate", 0, "")
	if err := flags.Parse([]string{"--fuel-rate=500000000"}); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(file, []string{"SLUICE_FUEL_RATE=3000000000"}, flags); err != nil || s.FuelRate != 5e8 {
		t.Errorf("from the flag: %d, %v", s.FuelRate, err)
	}
}

// TestCallFuel: call-fuel is off by default (call-timeout decides) and a
// flag sets it.
func TestCallFuel(t *testing.T) {
	s, err := Load("", nil, nil)
	if err != nil || s.CallFuel != 0 {
		t.Fatalf("default call-fuel %d, %v; want 0", s.CallFuel, err)
	}
	flags := pflag.NewFlagSet("run", pflag.ContinueOnError)
	flags.Int64("call-fuel", 0, "")
	if err := flags.Parse([]string{"--call-fuel=123456"}); err != nil {
		t.Fatal(err)
	}
	if s, err = Load("", nil, flags); err != nil || s.CallFuel != 123456 {
		t.Errorf("from the flag: %d, %v", s.CallFuel, err)
	}
}
