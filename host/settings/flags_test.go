package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestEverySettingHasAFlag: AddFlags gives every host and server setting
// a flag with help, and a flag given on the command line sets it, a
// list (data-roots) included, while the flags not given leave the host
// config file's values alone.
func TestEverySettingHasAFlag(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Int("slots", 0, "the command's own") // kept as it is
	AddFlags(fs, append(append([]string{}, Keys...), ServerKeys...)...)
	for _, k := range append(append([]string{}, Keys...), ServerKeys...) {
		f := fs.Lookup(k)
		if f == nil {
			t.Errorf("setting %s: no flag", k)
			continue
		}
		if f.Usage == "" {
			t.Errorf("flag --%s has no help", k)
		}
	}
	if fs.Lookup("slots").Usage != "the command's own" {
		t.Error("AddFlags replaced a flag the command had")
	}
	file := filepath.Join(t.TempDir(), "host.yaml")
	if err := os.WriteFile(file, []byte("batch-bytes: 777\nrestart-attempts: 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--max-output-bytes=100", "--data-roots=/a,/b", "--data-roots=/c", "--restart-delay=2s", "--job-memory=64", "--queue-capacity=7"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file, nil, fs)
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxOutputBytes != 100 || s.RestartDelay != 2*time.Second || s.JobMemory != 64 || s.QueueCapacity != 7 {
		t.Errorf("flags not applied: %+v", s)
	}
	if !reflect.DeepEqual(s.DataRoots, []string{"/a", "/b", "/c"}) {
		t.Errorf("data-roots = %q, want [/a /b /c]", s.DataRoots)
	}
	if s.BatchBytes != 777 || s.RestartAttempts != 9 {
		t.Errorf("an unset flag's default overrode the file: batch-bytes %d restart-attempts %d", s.BatchBytes, s.RestartAttempts)
	}
	if s.MemoryPages != Default().MemoryPages {
		t.Errorf("memory-pages = %d, want the default", s.MemoryPages)
	}
	fs2 := pflag.NewFlagSet("y", pflag.ContinueOnError)
	AddFlags(fs2, ServerKeys...)
	if err := fs2.Parse([]string{"--output-records=5", "--rate-limit=2.5", "--listen=:9"}); err != nil {
		t.Fatal(err)
	}
	_, ss, err := LoadServer("", nil, fs2)
	if err != nil {
		t.Fatal(err)
	}
	if ss.OutputRecords != 5 || ss.RateLimit != 2.5 || ss.Listen != ":9" {
		t.Errorf("server flags not applied: %+v", ss)
	}
}
