package plugin

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// StateTTLKey is the operator config key that sets TTLs on state slots
// (runtime.ParseStateTTL): read by the host, not passed to the guest.
const StateTTLKey = "state-ttl"

// stateDecl caches what describe declares of a module's state slots.
type stateDecl struct {
	once  sync.Once
	specs []runtime.SlotSpec
	err   error
}

// usesState reports whether the module imports any state call.
func (m *Module) usesState() bool {
	for _, im := range m.bin.imports {
		if im.module == abi.ImportModule && len(im.name) > 6 && im.name[:6] == "state_" {
			return true
		}
	}
	return false
}

// declaredState returns the state slots the plugin's describe declares
// (none when it exports no describe), calling describe once per module.
func (m *Module) declaredState(ctx context.Context) ([]runtime.SlotSpec, error) {
	if m.decl == nil {
		return nil, nil
	}
	m.decl.once.Do(func() {
		if _, ok := m.bin.export(abi.ExportDescribe); !ok {
			return
		}
		info, err := m.Inspect(ctx)
		m.decl.specs, m.decl.err = info.State, err
	})
	return m.decl.specs, m.decl.err
}

// eventClock is the deterministic TTL clock: the largest event time (ms)
// of the records the subtask's operator has been given, the current batch
// included; 0 before any. Read from snapshots too, so atomic.
type eventClock struct{ ms atomic.Int64 }

func (c *eventClock) now() int64 { return c.ms.Load() }

// advance moves the clock to the largest event time of batch.
func (c *eventClock) advance(batch []byte, count int) {
	rd := abi.NewReader(batch, count)
	hi := c.ms.Load()
	for rd.Next() {
		if r := rd.Current(); r.HasTime && r.Time > hi {
			hi = r.Time
		}
	}
	c.ms.Store(hi) // a malformed batch fails in the guest; what was read stands
}

// openState makes the operator's list and map state over its keyed state:
// the slots describe declares, the TTLs of the config's state-ttl, the
// clock (the real one when the plugin is granted it, else the event-time
// clock), and the TTL cleanup of snapshots. It returns the config without
// state-ttl.
func (o *Operator) openState(oc *runtime.OpenContext, cfg map[string]any) (map[string]any, error) {
	ttlCfg, hasTTL := cfg[StateTTLKey]
	if hasTTL {
		c := make(map[string]any, len(cfg))
		for k, v := range cfg {
			if k != StateTTLKey {
				c[k] = v
			}
		}
		cfg = c
	}
	if oc.State == nil {
		if hasTTL {
			return cfg, fmt.Errorf("config %s: state-ttl on an unkeyed operator: keyed state needs a keyBy before this operator", StateTTLKey)
		}
		return cfg, nil
	}
	if !o.r.m.usesState() && !hasTTL {
		return cfg, nil
	}
	specs, err := o.r.m.declaredState(o.r.ctx)
	if err != nil {
		return cfg, err
	}
	ttls, err := runtime.ParseStateTTL(ttlCfg)
	if err != nil {
		return cfg, fmt.Errorf("config %w", err)
	}
	specs = append(append([]runtime.SlotSpec(nil), specs...), ttls...) // the config's TTLs win
	m := o.r.m
	var now func() int64
	if m.host.cfg.AllowClock || m.grants.Clock {
		now = func() int64 { return time.Now().UnixMilli() }
	} else {
		o.clock = &eventClock{}
		now = o.clock.now
	}
	kinds, err := runtime.NewStateKinds(o.r.env.state, specs, now)
	if err != nil {
		return cfg, fmt.Errorf("state: %w", err)
	}
	o.r.env.kinds = kinds
	ttlSlots := false
	for _, sp := range kinds.Specs() {
		if sp.TTL <= 0 {
			continue
		}
		ttlSlots = true
		f, ok := oc.State.(runtime.SnapshotFilterer)
		if !ok {
			return cfg, fmt.Errorf("state slot %d has a ttl, but this operator's state backend (%T) cannot leave expired state out of its snapshots", sp.Slot, oc.State)
		}
		f.SetSnapshotFilter(sp.Slot, kinds.SnapshotFilter(sp.Slot))
	}
	if !ttlSlots {
		o.clock = nil // nothing reads it: no batch scan
	}
	return cfg, nil
}
