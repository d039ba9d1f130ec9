package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// FuelPerSecond converts Config.CallTimeout into a fuel budget when
// Config.CallFuel is not set. A fuel unit is about one wasm instruction;
// on this project's reference machine a spinning guest burns 2–7 units per
// nanosecond, real operators fewer, so a budget from CallTimeout stops a
// runaway well within that time.
const FuelPerSecond = 1_000_000_000

// maxSiteCharge caps what one function entry or loop header charges (see
// fuel.Options.MaxSiteCharge): Go guests' functions are large jump tables
// of which one path runs, and charging their whole body made a Go batch
// spend 50–100× more fuel than a C one for the same wall time.
const maxSiteCharge = 64

// fuelInterrupter meters every module (package fuel): function entries
// and loop headers spend fuel from a counter the host fills before each
// call, and a guest that runs out traps. The budget is deterministic: the
// same call on the same input stops at the same instruction on any
// machine, and costs the guest about 1.0–1.25× (see docs/benchmarks.md).
type fuelInterrupter struct {
	budget   int64
	cacheDir string // metered modules by the sha256 of the original; "" keeps none
	from     string // what the budget was derived from, for messages
}

func newFuelInterrupter(cfg Config) *fuelInterrupter {
	f := &fuelInterrupter{budget: cfg.CallFuel, from: "CallFuel"}
	if f.budget <= 0 {
		f.budget = int64(cfg.CallTimeout.Seconds() * FuelPerSecond)
		f.from = "CallTimeout " + cfg.CallTimeout.String()
	}
	if cfg.CacheDir != "" {
		f.cacheDir = filepath.Join(cfg.CacheDir, "fuel-v2")
	}
	return f
}

func (f *fuelInterrupter) configure(c wazero.RuntimeConfig) wazero.RuntimeConfig { return c }

func (f *fuelInterrupter) limit() string {
	return fmt.Sprintf("the call spent its CPU budget of %d fuel units (%s)", f.budget, f.from)
}

// prepare meters bin, reusing an earlier rewrite from the cache folder
// (metering a 3 MB Go module takes tens of milliseconds).
func (f *fuelInterrupter) prepare(bin []byte) ([]byte, error) {
	var path string
	if f.cacheDir != "" {
		sum := sha256.Sum256(bin)
		// The budget is part of the module (a start function runs on its
		// initial fuel), so it is part of the name.
		path = filepath.Join(f.cacheDir, fmt.Sprintf("%s-%d.wasm", hex.EncodeToString(sum[:]), f.budget))
		if b, err := os.ReadFile(path); err == nil {
			return b, nil
		}
	}
	out, err := fuel.Instrument(bin, fuel.Options{InitialFuel: f.budget, MaxSiteCharge: maxSiteCharge})
	if err != nil {
		return nil, fmt.Errorf("cannot meter the module: %w", err)
	}
	if path != "" && os.MkdirAll(f.cacheDir, 0o755) == nil {
		tmp := path + ".tmp"
		if os.WriteFile(tmp, out, 0o644) == nil {
			_ = os.Rename(tmp, path) // a failed cache write only costs time
		}
	}
	return out, nil
}

func (f *fuelInterrupter) bind(parent context.Context, mod api.Module) (callBound, error) {
	g, ok := mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal)
	if !ok {
		return nil, errNoCounter
	}
	return &fuelBound{ctx: parent, meter: fuel.NewMeter(g), f: f}, nil
}

// fuelBound fills the counter before each call and reads it after.
type fuelBound struct {
	ctx   context.Context
	meter *fuel.Meter
	f     *fuelInterrupter
}

func (b *fuelBound) start() context.Context {
	b.meter.Begin(b.f.budget)
	return b.ctx
}

func (b *fuelBound) stop(callErr error) error {
	if _, err := b.meter.End(callErr); callErr != nil && errors.Is(err, fuel.ErrExhausted) {
		return fmt.Errorf("%w: %s", ErrDeadline, b.f.limit())
	}
	return nil
}

func (b *fuelBound) release() {}
