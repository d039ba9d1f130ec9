package plugin

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
	pressureFile   = "/proc/pressure/cpu"
)

// pressure samples the CPU pressure for every Host of the process.
var pressure struct {
	mu        sync.Mutex
	at        time.Time // the last sample
	total     int64     // its cumulative stall, µs
	contended bool
	known     bool // the file exists and parses
	missing   bool // it does not: assume contention
}

// cpuContended reports whether the machine's CPU was contended over the
// last sampling interval. Where pressure stall information is not
// available (not Linux, or a kernel without it) it reports true: long
// calls then give way to any busy tenant, isolation first.
func cpuContended(now time.Time) bool {
	p := &pressure
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.missing {
		return true
	}
	if !p.at.IsZero() && now.Sub(p.at) < pressureEvery {
		return p.contended
	}
	avg10, total, ok := readPressure(pressureFile)
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

// readPressure parses the "some" line of a pressure file:
//
//	some avg10=37.63 avg60=52.89 avg300=58.89 total=1356064201
func readPressure(path string) (avg10 float64, total int64, ok bool) {
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
