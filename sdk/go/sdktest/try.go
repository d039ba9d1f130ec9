//go:build !wasip1

package sdktest

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
	"github.com/sluicehq/sluice/sdk/go/internal/mpvalue"
)

// Try is Run returning the first error instead of failing a test: a
// *CallError when the guest returned a non-zero status. Output emitted by
// a failed call is discarded, as the host does.
func Try(opts Options, in ...Record) (*Result, error) {
	opts.defaults()
	running.Lock()
	defer running.Unlock()
	h := newFakeHost(opts.Unconsumed)
	hostcall.Fake = h
	defer func() { hostcall.Fake = nil }()
	hostcall.Guest.NewInstance()

	r := &run{h: h, res: &Result{Out: map[string][]Record{}, host: h}}
	if err := r.describe(); err != nil {
		return nil, err
	}
	cfg, err := mpvalue.Encode(nil, opts.Config)
	if opts.Config == nil {
		cfg, err = abi.AppendMapHeader(nil, 0), nil
	}
	if err != nil {
		return nil, err
	}
	if err := r.call("sluice_open", func() int32 {
		return hostcall.Guest.Open(cfg, int32(opts.Subtask), int32(opts.Parallelism), int32(opts.MaxParallelism))
	}); err != nil {
		return nil, err
	}
	if r.res.Describe["kind"] == string(abi.KindPartitioner) {
		err = r.partition(opts, in)
	} else {
		err = r.process(opts, in)
	}
	if err != nil {
		return nil, err
	}
	if err := r.call("sluice_close", hostcall.Guest.Close); err != nil {
		return nil, err
	}
	if err := r.collect(); err != nil {
		return nil, err
	}
	return r.res, nil
}

// run is the state of one Try.
type run struct {
	h    *fakeHost
	res  *Result
	done []emission // output of the successful calls, in order
}

// call makes one guest call; its output is kept only when it succeeds.
func (r *run) call(export string, fn func() int32) error {
	r.h.begin()
	if st := abi.Status(fn()); st != abi.StatusOK {
		return &CallError{Export: export, Status: st, Text: r.h.errText}
	}
	r.done = append(r.done, r.h.pending...)
	return nil
}

func (r *run) describe() error {
	r.h.begin()
	if st := abi.Status(hostcall.Guest.Describe()); st != abi.StatusOK {
		return &CallError{Export: "sluice_describe", Status: st, Text: r.h.errText}
	}
	if len(r.h.pending) != 1 || r.h.pending[0].port != 0 || r.h.pending[0].count != 1 {
		return errors.New("sdktest: sluice_describe must emit one map on port 0")
	}
	m, err := mpvalue.DecodeMap(r.h.pending[0].buf)
	r.res.Describe = m
	return err
}

// process sends the inputs in batches of consecutive records of one port.
func (r *run) process(opts Options, in []Record) error {
	for i := 0; i < len(in); {
		if m := in[i].mark; m != markNone {
			if err := r.advance(m, in[i].Time); err != nil {
				return err
			}
			i++
			continue
		}
		port, n := in[i].Port, 0
		var batch []byte
		for ; i < len(in) && in[i].Port == port && in[i].mark == markNone && n < opts.BatchSize; i, n = i+1, n+1 {
			var err error
			if batch, err = in[i].envelope(batch, opts.KeyBy); err != nil {
				return err
			}
		}
		// as the host does: with a batch index when the batch can be
		// indexed (abi.ExportProcessIndexed); errors name the process call
		call := func() int32 { return hostcall.Guest.Process(int32(port), batch, int32(n)) }
		if index, err := abi.AppendIndex(nil, batch, n); err == nil {
			call = func() int32 { return hostcall.Guest.ProcessIndexed(int32(port), batch, int32(n), index) }
		}
		if err := r.call("sluice_process", call); err != nil {
			return err
		}
	}
	if r.h.timers != nil { // the end of input: every timer fires
		if err := r.advance(markWatermark, math.MaxInt64); err != nil {
			return err
		}
		return r.advance(markProcessing, math.MaxInt64)
	}
	return nil
}

// advance moves the watermark (or the processing-time clock) to ms and
// fires the timers it passes, each in a sluice_on_timer call.
func (r *run) advance(mark int, ms int64) error {
	t := r.h.tm()
	kind := int32(abi.TimerEventTime)
	if mark == markProcessing {
		kind = abi.TimerProcessingTime
		t.proc = max(t.proc, ms)
	} else {
		t.wm = max(t.wm, ms)
	}
	for {
		id, ok := t.due(kind, ms)
		if !ok {
			return nil
		}
		key := []byte(id.key)
		if err := r.call("sluice_on_timer", func() int32 { return hostcall.Guest.OnTimer(id.kind, id.ts, key) }); err != nil {
			return err
		}
	}
}

// partition sends all inputs in one sluice_partition call.
func (r *run) partition(opts Options, in []Record) error {
	var batch []byte
	for _, rec := range in {
		var err error
		if batch, err = rec.envelope(batch, opts.KeyBy); err != nil {
			return err
		}
	}
	r.h.begin()
	if st := abi.Status(hostcall.Guest.Partition(batch, int32(len(in)), int32(opts.Channels))); st != abi.StatusOK {
		return &CallError{Export: "sluice_partition", Status: st, Text: r.h.errText}
	}
	r.res.Channels = []int{}
	for _, e := range r.h.pending {
		if e.port != 0 || len(e.buf) != 4*e.count {
			return errors.New("sdktest: sluice_partition must emit count little-endian i32 on port 0")
		}
		for j := 0; j < e.count; j++ {
			r.res.Channels = append(r.res.Channels, int(int32(binary.LittleEndian.Uint32(e.buf[4*j:]))))
		}
	}
	if len(r.res.Channels) != len(in) {
		return errors.New("sdktest: sluice_partition emitted a channel count different from the record count")
	}
	return nil
}

// collect decodes the output of every successful call, checking that it
// is a well-formed batch.
func (r *run) collect() error {
	keys := r.res.Describe["kind"] == string(abi.KindKeySelector)
	for _, e := range r.done {
		if keys {
			if err := r.collectKeys(e); err != nil {
				return err
			}
			continue
		}
		tag := r.h.tags[e.port]
		rd := abi.NewReader(e.buf, e.count)
		for rd.Next() {
			rec, err := output(rd.Record(), e.port, tag)
			if err != nil {
				return err
			}
			r.res.Out[tag] = append(r.res.Out[tag], rec)
		}
		if err := rd.Err(); err != nil {
			return errors.New("sdktest: malformed output batch: " + err.Error())
		}
	}
	return nil
}

// collectKeys decodes a key selector's output: count concatenated keys.
func (r *run) collectKeys(e emission) error {
	off := 0
	for j := 0; j < e.count; j++ {
		end, err := abi.Skip(e.buf, off)
		if err != nil {
			return err
		}
		k, err := mpvalue.Decode(e.buf[off:end])
		if err != nil {
			return err
		}
		r.res.Keys, off = append(r.res.Keys, k), end
	}
	if off != len(e.buf) {
		return errors.New("sdktest: bytes after the last key")
	}
	return nil
}
