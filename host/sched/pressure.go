package sched

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"
)

// The CPU is contended when tasks waited for a core at least this share
// of the time (Linux's pressure stall information, /proc/pressure/cpu,
// "some": at least one runnable task waiting). Two busy threads on two
// idle cores wait close to never; three on two wait all the time.
const (
	contendedShare = 0.1
	pressureEvery  = 10 * time.Millisecond // how often the file is read, at most
	// PressureFile is the machine's CPU pressure.
	PressureFile = "/proc/pressure/cpu"
)

// Pressure samples a pressure file, at most every 10 ms whoever asks: it
// is safe for concurrent use.
type Pressure struct {
	path string

	mu        sync.Mutex
	at        time.Time // the last sample
	total     int64     // its cumulative stall, µs
	contended bool
	missing   bool // the file does not exist or parse: assume contention
}

// NewPressure samples the pressure file at path.
func NewPressure(path string) *Pressure { return &Pressure{path: path} }

// Machine is the machine's CPU pressure, the one sampler of the process.
// Process-wide because what it samples is: every Host of the process (a
// tenant each, in host serve) runs on the same cores, and one sampler
// reads the file at most every 10 ms for all of their calls, where one per
// Host would read it that often each.
var Machine = NewPressure(PressureFile)

// Contended reports whether the CPU was contended over the last sampling
// interval, at now. Where pressure stall information is not available
// (not Linux, or a kernel without it) it reports true: long calls then
// give way to any busy tenant, isolation first.
func (p *Pressure) Contended(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.missing {
		return true
	}
	if !p.at.IsZero() && now.Sub(p.at) < pressureEvery {
		return p.contended
	}
	avg10, total, ok := ReadPressure(p.path)
	if !ok {
		p.missing = true
		return true
	}
	switch dt := now.Sub(p.at); {
	case p.at.IsZero() || dt > 10*time.Second: // no recent sample: the kernel's 10 s average
		p.contended = avg10 >= 100*contendedShare
	default:
		p.contended = float64(total-p.total) >= contendedShare*float64(dt.Microseconds())
	}
	p.at, p.total = now, total
	return p.contended
}

// ReadPressure parses the "some" line of a pressure file:
//
//	some avg10=37.63 avg60=52.89 avg300=58.89 total=1356064201
func ReadPressure(path string) (avg10 float64, total int64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) != 5 || string(fields[0]) != "some" {
		return 0, 0, false
	}
	var haveAvg, haveTotal bool
	for _, f := range fields[1:] {
		k, v, _ := bytes.Cut(f, []byte("="))
		switch string(k) {
		case "avg10":
			avg10, err = strconv.ParseFloat(string(v), 64)
			haveAvg = err == nil
		case "total":
			total, err = strconv.ParseInt(string(v), 10, 64)
			haveTotal = err == nil
		}
	}
	return avg10, total, haveAvg && haveTotal
}
