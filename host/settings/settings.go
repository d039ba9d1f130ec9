// Package settings holds the host's settings — what the machine running
// sluice offers and allows, as opposed to what a pipeline asks for — read
// through viper from a host config file, SLUICE_* environment variables and
// command-line flags, in rising order of precedence.
package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/suggest"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Settings are flat: each field's key is its name in a host config file,
// its flag name, and (upper-cased, dashes as underscores, SLUICE_ prefix)
// its environment variable: memory-pages, --memory-pages,
// SLUICE_MEMORY_PAGES.
type Settings struct {
	Slots          int           `mapstructure:"slots"`            // slots this host offers; 0: unlimited
	MemoryPages    uint32        `mapstructure:"memory-pages"`     // per plugin instance, 64 KiB pages
	CallTimeout    time.Duration `mapstructure:"call-timeout"`     // per plugin call
	MaxOutputBytes int           `mapstructure:"max-output-bytes"` // per plugin call
	MaxModuleBytes int           `mapstructure:"max-module-bytes"` // per plugin module file
	CacheDir       string        `mapstructure:"cache-dir"`        // compiled-plugin cache; "" disables it
	BatchSize      int           `mapstructure:"batch-size"`       // records per batch between tasks
	BatchBytes     int           `mapstructure:"batch-bytes"`      // bytes per batch between tasks
	Linger         time.Duration `mapstructure:"linger"`           // longest a partial batch waits
	QueueCapacity  int           `mapstructure:"queue-capacity"`   // batches per channel between tasks
	// Seed seeds the channels REBALANCE starts at and SHUFFLE draws: the
	// same seed picks the same channels on every run (0, the default).
	Seed int64 `mapstructure:"seed"`

	// Sandbox: the restart policy, job memory and data roots (sandbox.go).
	Sandbox `mapstructure:",squash"`
	// Checkpointing: the defaults of a pipeline's checkpointing: and
	// restart-strategy: (checkpointing.go).
	Checkpointing `mapstructure:",squash"`
}

// Default returns the settings used when nothing else is said.
func Default() Settings {
	return Settings{
		MemoryPages:    256, // 16 MiB
		CallTimeout:    5 * time.Second,
		MaxOutputBytes: 64 << 20,
		MaxModuleBytes: 64 << 20,
		CacheDir:       defaultCacheDir(),
		BatchSize:      1024,
		BatchBytes:     256 << 10,
		Linger:         5 * time.Millisecond,
		QueueCapacity:  4,
		Sandbox:        DefaultSandbox(),
		Checkpointing:  DefaultCheckpointing(),
	}
}

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "sluice", "wasm")
	}
	return ""
}

// Validate checks every field and names the ones that are wrong.
func (s Settings) Validate() error {
	var errs []error
	check := func(ok bool, key, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("setting %s: "+format, append([]any{key}, args...)...))
		}
	}
	check(s.Slots >= 0, "slots", "must not be negative, got %d", s.Slots)
	check(s.MemoryPages >= 1 && s.MemoryPages <= 65535, "memory-pages", "must be in 1..65535 (64 KiB pages: under 4 GiB), got %d", s.MemoryPages)
	check(s.CallTimeout > 0, "call-timeout", "must be positive, got %s", s.CallTimeout)
	check(s.MaxOutputBytes > 0, "max-output-bytes", "must be positive, got %d", s.MaxOutputBytes)
	check(s.MaxModuleBytes > 0, "max-module-bytes", "must be positive, got %d", s.MaxModuleBytes)
	check(s.BatchSize >= 1, "batch-size", "must be at least 1, got %d", s.BatchSize)
	check(s.BatchBytes >= 1, "batch-bytes", "must be at least 1, got %d", s.BatchBytes)
	check(s.Linger >= 0, "linger", "must not be negative, got %s", s.Linger)
	check(s.QueueCapacity >= 1, "queue-capacity", "must be at least 1, got %d", s.QueueCapacity)
	errs = append(errs, s.Sandbox.validate()...)
	errs = append(errs, s.Checkpointing.validate()...)
	return errors.Join(errs...)
}

// Keys lists every setting's key, in declaration order.
var Keys = []string{"slots", "memory-pages", "call-timeout", "max-output-bytes", "max-module-bytes",
	"cache-dir", "batch-size", "batch-bytes", "linger", "queue-capacity", "seed"}

// Load reads the settings: defaults, then the host config file (when file
// is not empty), then SLUICE_* environment variables (from env, e.g.
// os.Environ()), then every flag in flags whose name is a key and that the
// user set. Unknown keys in the file are errors.
func Load(file string, env []string, flags *pflag.FlagSet) (Settings, error) {
	v, from, err := read(file, env, flags)
	if err != nil {
		return Default(), err
	}
	return unmarshal(v, from)
}

// origins says where each key that was set came from: the host config
// file, a SLUICE_* variable or a flag, for messages.
type origins map[string]string

// read layers the defaults, the host config file, SLUICE_* environment
// variables and the flags that were set into one viper. Keys of the file
// must be host settings (Keys), server settings (ServerKeys) or tenants.
func read(file string, env []string, flags *pflag.FlagSet) (*viper.Viper, origins, error) {
	from := origins{}
	v := viper.New()
	setDefaults(v, Default())
	setServerDefaults(v, DefaultServer())
	defaults := viper.New() // what each key's value is when no one sets it
	setDefaults(defaults, Default())
	setServerDefaults(defaults, DefaultServer())
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			var unsupported viper.UnsupportedConfigError
			if errors.As(err, &unsupported) {
				return nil, nil, fmt.Errorf("host config %s: cannot tell its format: the name must end in .yaml, .yml, .json or .toml", file)
			}
			return nil, nil, fmt.Errorf("host config %s: %w", file, err)
		}
		for _, k := range v.AllKeys() {
			if v.InConfig(k) {
				from[k] = "host config " + file
			}
			if !isKey(k) && !strings.HasPrefix(k, "tenants.") && k != "tenants" {
				known := append(Keys[:len(Keys):len(Keys)], ServerKeys...)
				if s := suggest.Closest(k, known); s != "" {
					return nil, nil, fmt.Errorf("host config %s: unknown setting %q (did you mean %q?)", file, k, s)
				}
				return nil, nil, fmt.Errorf("host config %s: unknown setting %q (known: %s)", file, k, strings.Join(known, ", "))
			}
			// a bare number would be read as nanoseconds: a duration needs its unit
			if _, isDuration := defaults.Get(k).(time.Duration); isDuration {
				switch n := v.Get(k).(type) {
				case int, int64, uint64, float64:
					return nil, nil, fmt.Errorf("host config %s: %s: %v has no unit: write it with one, as %vs or %vms", file, k, n, n, n)
				}
			}
		}
	}
	for _, kv := range env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "SLUICE_") {
			continue
		}
		key := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "SLUICE_"), "_", "-"))
		if !isKey(key) || key == "tenants" {
			continue // not a setting (e.g. SLUICE_TOKEN read elsewhere)
		}
		v.Set(key, val)
		from[key] = name
	}
	if flags != nil {
		flags.Visit(func(f *pflag.Flag) {
			if isKey(f.Name) {
				if sv, ok := f.Value.(pflag.SliceValue); ok { // data-roots: String() is "[a,b]"
					v.Set(f.Name, sv.GetSlice())
				} else {
					v.Set(f.Name, f.Value.String())
				}
				from[f.Name] = "--" + f.Name
			}
		})
	}
	return v, from, nil
}

func unmarshal(v *viper.Viper, from origins) (Settings, error) {
	s := Default()
	if err := v.Unmarshal(&s); err != nil {
		return Default(), decodeError("host settings", err, from)
	}
	return s, s.Validate()
}

// decodeError words mapstructure's "decoding failed due to the following
// error(s): 'key' cannot parse value as 'uint32': ..." as one line per
// setting, each naming where its value came from.
func decodeError(what string, err error, from origins) error {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		key, rest, ok := strings.Cut(strings.TrimPrefix(l, "'"), "' ")
		if !ok || !strings.HasPrefix(l, "'") {
			continue
		}
		if o := from[key]; o != "" {
			key += " (from " + o + ")"
		}
		lines = append(lines, "setting "+key+": "+rest)
	}
	if len(lines) == 0 {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %s", what, strings.Join(lines, "; "))
}

// isKey reports whether key names a host or server setting.
func isKey(key string) bool { return contains(Keys, key) || contains(ServerKeys, key) }

func setDefaults(v *viper.Viper, s Settings) {
	v.SetDefault("slots", s.Slots)
	v.SetDefault("memory-pages", s.MemoryPages)
	v.SetDefault("call-timeout", s.CallTimeout)
	v.SetDefault("max-output-bytes", s.MaxOutputBytes)
	v.SetDefault("max-module-bytes", s.MaxModuleBytes)
	v.SetDefault("cache-dir", s.CacheDir)
	v.SetDefault("batch-size", s.BatchSize)
	v.SetDefault("batch-bytes", s.BatchBytes)
	v.SetDefault("linger", s.Linger)
	v.SetDefault("queue-capacity", s.QueueCapacity)
	v.SetDefault("seed", s.Seed)
	setSandboxDefaults(v, s.Sandbox)
	setCheckpointingDefaults(v, s.Checkpointing)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
