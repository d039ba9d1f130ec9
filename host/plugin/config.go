package plugin

import (
	"fmt"
	"time"
)

// Config holds the limits and permissions of a Host. Every instance the
// Host creates shares them.
type Config struct {
	// MemoryLimitPages caps each instance's linear memory, in 64 KiB
	// pages. A module that declares more initial memory is refused at
	// load; a memory.grow past it fails inside the guest.
	MemoryLimitPages uint32
	// CallTimeout is the deadline of each call into a guest (open,
	// process, close, partition, ...). A call that runs past it is
	// interrupted and poisons its instance. Under "fuel" interruption it
	// is checked against the clock at every slice of fuel (less the time
	// the host made the call wait), unless CallFuel is set.
	CallTimeout time.Duration
	// CallFuel is the CPU budget of each call in fuel units (about one wasm
	// instruction each) when Interruption is "fuel": deterministic, and it
	// replaces CallTimeout. 0: CallTimeout decides, with a backstop budget
	// of CallTimeout at FuelPerSecond. A call gets its fuel in slices of
	// FuelSlice, yielding its goroutine between them.
	CallFuel int64
	// FuelRate caps the fuel the Host's guests spend per second, over all
	// its instances (when Interruption is "fuel"): a call that would pass
	// it waits between slices and after it returns. It caps a tenant's CPU
	// (a spinning guest burns 2–7 units per nanosecond) without touching
	// its budgets: fuel, not time, still decides where a runaway stops.
	// 0: no cap.
	FuelRate int64
	// FuelPacer, when set, is the cap instead of FuelRate: a rate shared
	// with every other Host given the same FuelPacer (a tenant's jobs, each
	// on its own Host), so that they spend it together.
	FuelPacer *FuelPacer
	// Interruption is how runaway calls are stopped: "fuel" (default:
	// metered modules, a deterministic budget), "deadline" (wazero's
	// close-on-context-done, much slower on loop-heavy guests) or "none"
	// (unbounded; for measuring what the sandbox costs).
	Interruption string
	// MaxOutputBytes caps the bytes one call may emit, over all ports.
	// An emit that would pass it is refused before anything is copied.
	MaxOutputBytes int
	// MaxModuleBytes caps the size of a module file, checked before it
	// is read in full and before compiling.
	MaxModuleBytes int
	// CacheDir holds wazero's compilation cache on disk so that a module
	// compiles once across processes. Empty keeps compiled code in
	// memory only.
	CacheDir string
	// StderrCap is how many trailing bytes of each instance's stderr (and,
	// separately, stdout) are kept; older bytes are dropped.
	StderrCap int
	// AllowClock gives guests the real wall and monotonic clocks. Off,
	// they see wazero's deterministic fake clocks.
	AllowClock bool
	// AllowRandom gives guests crypto/rand. Off, they read a seeded,
	// deterministic stream: two runs give byte-identical output.
	AllowRandom bool
	// CheckOutput validates what a guest emits (count envelopes for an
	// operator, count msgpack values for a key selector, 4*count bytes
	// for a partitioner) before copying it.
	CheckOutput bool
	// RestartAttempts is how many times an operator subtask's instance
	// may be replaced within RestartWindow after a record poisoned it
	// (and the operator's on-error skipped or dead-lettered the record);
	// one more crash fails the job: a crash loop does not spin.
	RestartAttempts int
	// RestartDelay is the fixed delay before such a replacement.
	RestartDelay time.Duration
	// RestartWindow is the sliding window RestartAttempts counts in.
	RestartWindow time.Duration
}

// DefaultConfig returns the limits used when nothing else is configured.
func DefaultConfig() Config {
	return Config{
		MemoryLimitPages: 1024, // 64 MiB
		CallTimeout:      5 * time.Second,
		MaxOutputBytes:   16 << 20,
		MaxModuleBytes:   32 << 20,
		StderrCap:        4 << 10,
		CheckOutput:      true,
		RestartAttempts:  DefaultRestartAttempts,
		RestartDelay:     DefaultRestartDelay,
		RestartWindow:    DefaultRestartWindow,
	}
}

// Defaults of the restart policy.
const (
	DefaultRestartAttempts = 3
	DefaultRestartDelay    = 100 * time.Millisecond
	DefaultRestartWindow   = 10 * time.Second
)

// Hard bounds of the configuration.
const (
	maxMemoryPages = 65535 // keeps every memory size within uint32 bytes
	maxOutputBytes = 1 << 30
	maxModuleBytes = 1 << 30
	maxStderrCap   = 1 << 20
)

// Validate reports the first field outside its bounds.
func (c Config) Validate() error {
	switch {
	case c.MemoryLimitPages == 0 || c.MemoryLimitPages > maxMemoryPages:
		return fmt.Errorf("plugin config: MemoryLimitPages is %d, want 1 to %d (64 KiB pages)", c.MemoryLimitPages, maxMemoryPages)
	case c.CallTimeout <= 0:
		return fmt.Errorf("plugin config: CallTimeout is %s, want a positive duration: every call into a plugin needs a deadline", c.CallTimeout)
	case c.CallFuel < 0:
		return fmt.Errorf("plugin config: CallFuel is %d, want 0 (derived from CallTimeout) or more", c.CallFuel)
	case c.FuelRate < 0:
		return fmt.Errorf("plugin config: FuelRate is %d, want 0 (no cap) or more fuel units per second", c.FuelRate)
	case c.Interruption != "" && c.Interruption != InterruptFuel && c.Interruption != InterruptDeadline && c.Interruption != InterruptNone:
		return fmt.Errorf("plugin config: Interruption is %q, want %q, %q or %q", c.Interruption, InterruptFuel, InterruptDeadline, InterruptNone)
	case c.MaxOutputBytes <= 0 || c.MaxOutputBytes > maxOutputBytes:
		return fmt.Errorf("plugin config: MaxOutputBytes is %d, want 1 to %d", c.MaxOutputBytes, maxOutputBytes)
	case c.MaxModuleBytes <= 0 || c.MaxModuleBytes > maxModuleBytes:
		return fmt.Errorf("plugin config: MaxModuleBytes is %d, want 1 to %d", c.MaxModuleBytes, maxModuleBytes)
	case c.StderrCap < 0 || c.StderrCap > maxStderrCap:
		return fmt.Errorf("plugin config: StderrCap is %d, want 0 to %d", c.StderrCap, maxStderrCap)
	case c.RestartAttempts < 0:
		return fmt.Errorf("plugin config: RestartAttempts is %d, want 0 or more", c.RestartAttempts)
	case c.RestartDelay < 0:
		return fmt.Errorf("plugin config: RestartDelay is %s, want 0 or more", c.RestartDelay)
	case c.RestartWindow <= 0:
		return fmt.Errorf("plugin config: RestartWindow is %s, want a positive duration", c.RestartWindow)
	}
	return nil
}

// pagesText renders a page count with its size, e.g. "256 pages (16 MiB)".
func pagesText(pages uint64) string {
	return fmt.Sprintf("%d pages (%s)", pages, sizeText(pages*65536))
}

// sizeText renders a byte count in KiB or MiB.
func sizeText(b uint64) string { return SizeText(b) }

// SizeText renders a byte count in KiB or MiB, as the host's messages
// give sizes.
func SizeText(b uint64) string {
	switch {
	case b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
