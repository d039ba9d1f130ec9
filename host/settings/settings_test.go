package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestPrecedenceFileEnvFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "host.yaml")
	if err := os.WriteFile(file, []byte("slots: 4\nmemory-pages: 100\ncall-timeout: 2s\nlinger: 1ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := pflag.NewFlagSet("x", pflag.ContinueOnError)
	flags.Int("slots", 0, "")
	flags.Int("batch-size", 0, "")
	flags.Duration("linger", 0, "")
	if err := flags.Parse([]string{"--slots=8", "--linger=3ms"}); err != nil {
		t.Fatal(err)
	}
	env := []string{"SLUICE_MEMORY_PAGES=200", "SLUICE_SLOTS=6", "SLUICE_TOKEN=ignored", "PATH=/bin"}
	s, err := Load(file, env, flags)
	if err != nil {
		t.Fatal(err)
	}
	if s.Slots != 8 {
		t.Errorf("slots = %d, want 8 (flag beats env and file)", s.Slots)
	}
	if s.MemoryPages != 200 {
		t.Errorf("memory-pages = %d, want 200 (env beats file)", s.MemoryPages)
	}
	if s.CallTimeout != 2*time.Second {
		t.Errorf("call-timeout = %s, want 2s (file beats default)", s.CallTimeout)
	}
	if s.Linger != 3*time.Millisecond {
		t.Errorf("linger = %s, want 3ms (flag)", s.Linger)
	}
	if s.BatchSize != Default().BatchSize {
		t.Errorf("batch-size = %d, want the default %d (flag not set)", s.BatchSize, Default().BatchSize)
	}
}

func TestUnknownKeyAndInvalidValues(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "host.yaml")
	os.WriteFile(file, []byte("slotz: 4\n"), 0o600)
	if _, err := Load(file, nil, nil); err == nil || !strings.Contains(err.Error(), `unknown setting "slotz" (did you mean "slots"?)`) {
		t.Fatalf("err = %v, want unknown setting with a suggestion", err)
	}
	os.WriteFile(file, []byte("nothing-like-it: 4\n"), 0o600)
	if _, err := Load(file, nil, nil); err == nil || !strings.Contains(err.Error(), `unknown setting "nothing-like-it" (known: slots, `) {
		t.Fatalf("err = %v, want unknown setting with the known ones", err)
	}
	// the plugin runtime's own bound (plugin.Config.Validate): 65536 pages
	// would be 4 GiB, one byte past what a 32-bit memory size holds
	if _, err := Load("", []string{"SLUICE_MEMORY_PAGES=65536"}, nil); err == nil || !strings.Contains(err.Error(), "must be in 1..65535") {
		t.Fatalf("65536 pages: err = %v", err)
	}
	if _, err := Load("", []string{"SLUICE_MEMORY_PAGES=65535"}, nil); err != nil {
		t.Fatalf("65535 pages: %v", err)
	}
	_, err := Load("", []string{"SLUICE_MEMORY_PAGES=0", "SLUICE_QUEUE_CAPACITY=0"}, nil)
	if err == nil || !strings.Contains(err.Error(), "setting memory-pages: must be in 1..65535") ||
		!strings.Contains(err.Error(), "setting queue-capacity: must be at least 1") {
		t.Fatalf("err = %v, want both fields named", err)
	}
}

// TestFileDurationsNeedUnits: a bare number for a duration in the host
// config file would be nanoseconds (call-timeout: 5 made every call time
// out); the file must give a unit, as the flag and the variable must.
// A file whose name says no format is refused in words.
func TestFileDurationsNeedUnits(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "host.yaml")
	os.WriteFile(file, []byte("call-timeout: 5\n"), 0o600)
	if _, err := Load(file, nil, nil); err == nil || !strings.Contains(err.Error(), "call-timeout: 5 has no unit: write it with one, as 5s or 5ms") {
		t.Fatalf("err = %v", err)
	}
	os.WriteFile(file, []byte("call-timeout: 5s\nlinger: 2ms\n"), 0o600)
	s, err := Load(file, nil, nil)
	if err != nil || s.CallTimeout != 5*time.Second || s.Linger != 2*time.Millisecond {
		t.Fatalf("%+v, %v", s, err)
	}
	bare := filepath.Join(dir, "hostconfig")
	os.WriteFile(bare, []byte("slots: 2\n"), 0o600)
	if _, err := Load(bare, nil, nil); err == nil || !strings.Contains(err.Error(), "cannot tell its format: the name must end in .yaml, .yml, .json or .toml") {
		t.Fatalf("err = %v", err)
	}
}

// TestDecodeErrorsNameTheSource: a value that does not decode is named
// with the setting and where it came from, in one line (mapstructure says
// "decoding failed due to the following error(s):" over several).
func TestDecodeErrorsNameTheSource(t *testing.T) {
	file := filepath.Join(t.TempDir(), "host.yaml")
	os.WriteFile(file, []byte("batch-size: lots\n"), 0o600)
	_, err := Load(file, []string{"SLUICE_MEMORY_PAGES=many"}, nil)
	if err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "setting memory-pages (from SLUICE_MEMORY_PAGES): cannot parse value as 'uint32'") ||
		!strings.Contains(err.Error(), "setting batch-size (from host config "+file+"): cannot parse value as 'int'") {
		t.Fatalf("err = %v", err)
	}
}
