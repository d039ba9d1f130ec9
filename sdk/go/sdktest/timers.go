package sdktest

import (
	"math"
	"sort"

	"github.com/sluicehq/sluice/abi"
)

// Timers in the fake host (abi/timers.go): one per (kind, key, time),
// fired in time order (then registration order) when a Watermark or a
// ProcessingTime input passes them, and every one at the end of the
// input, as the host does.

type timerID struct {
	kind int32
	key  string
	ts   int64
}

type timerState struct {
	pending map[timerID]uint64 // -> registration order
	seq     uint64
	wm      int64
	proc    int64
}

func (h *fakeHost) tm() *timerState {
	if h.timers == nil {
		h.timers = &timerState{pending: map[timerID]uint64{}, wm: math.MinInt64}
	}
	return h.timers
}

func (h *fakeHost) TimerRegister(kind int32, key []byte, ts int64) int32 {
	if kind != abi.TimerEventTime && kind != abi.TimerProcessingTime || len(key) == 0 {
		return int32(abi.StatusState)
	}
	t := h.tm()
	id := timerID{kind, string(key), ts}
	if _, ok := t.pending[id]; !ok {
		t.seq++
		t.pending[id] = t.seq
	}
	return int32(abi.StatusOK)
}

func (h *fakeHost) TimerDelete(kind int32, key []byte, ts int64) int32 {
	if kind != abi.TimerEventTime && kind != abi.TimerProcessingTime || len(key) == 0 {
		return int32(abi.StatusState)
	}
	delete(h.tm().pending, timerID{kind, string(key), ts})
	return int32(abi.StatusOK)
}

func (h *fakeHost) CurrentWatermark() int64      { return h.tm().wm }
func (h *fakeHost) CurrentProcessingTime() int64 { return h.tm().proc }

// due takes the earliest pending timer of kind at or before upTo.
func (t *timerState) due(kind int32, upTo int64) (timerID, bool) {
	var ids []timerID
	for id := range t.pending {
		if id.kind == kind && id.ts <= upTo {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return timerID{}, false
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].ts != ids[j].ts {
			return ids[i].ts < ids[j].ts
		}
		return t.pending[ids[i]] < t.pending[ids[j]]
	})
	delete(t.pending, ids[0])
	return ids[0], true
}

// Watermark is an input that advances the operator's watermark to ms:
// the event-time timers it passes fire, then the inputs after it go on.
func Watermark(ms int64) Record { return Record{mark: markWatermark, Time: ms} }

// ProcessingTime is an input that moves the processing-time clock to ms:
// the processing-time timers it passes fire.
func ProcessingTime(ms int64) Record { return Record{mark: markProcessing, Time: ms} }

const (
	markNone = iota
	markWatermark
	markProcessing
)
