package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// TestCheckpointingSettings: the defaults are Flink's (checkpoint.Defaults),
// the file and the environment set them like any setting, and bad values
// are named.
func TestCheckpointingSettings(t *testing.T) {
	s, err := Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CheckpointConfig(); got != checkpoint.Defaults() || s.RestartStrategy != "" {
		t.Errorf("defaults %+v, restart-strategy %q; want checkpoint.Defaults() and none of the host's own", got, s.RestartStrategy)
	}
	file := filepath.Join(t.TempDir(), "host.yaml")
	if err := os.WriteFile(file, []byte("checkpoint-interval: 30s\ncheckpoint-storage: /var/ckpt\ncheckpoint-retain: 3\nrestart-strategy: fixed-delay\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Load(file, []string{"SLUICE_CHECKPOINT_MODE=at-least-once", "SLUICE_CHECKPOINT_TOLERABLE_FAILURES=2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := checkpoint.Defaults()
	want.Interval, want.Storage, want.Retain, want.Mode, want.TolerableFailures = 30*time.Second, "/var/ckpt", 3, checkpoint.AtLeastOnce, 2
	if got := s.CheckpointConfig(); got != want || s.RestartStrategy != "fixed-delay" {
		t.Errorf("loaded %+v, %q\nwant   %+v", got, s.RestartStrategy, want)
	}
	_, err = Load("", []string{"SLUICE_CHECKPOINT_INTERVAL=5ms", "SLUICE_CHECKPOINT_MODE=twice", "SLUICE_CHECKPOINT_RETAIN=0", "SLUICE_RESTART_STRATEGY=sometimes"}, nil)
	for _, key := range []string{"checkpoint-interval", "checkpoint-mode", "checkpoint-retain", "restart-strategy"} {
		if err == nil || !strings.Contains(err.Error(), "setting "+key) {
			t.Errorf("bad %s: %v", key, err)
		}
	}
}
