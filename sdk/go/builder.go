package sdk

// NewRecord returns an empty record to fill with setters:
//
//	out.Emit(sdk.NewRecord().SetStr("word", w).SetInt("count", 1))
//
// Made during an operator call, it comes from SDK-owned memory (no
// allocation), carries the event time of the input record being
// processed, as Flink's collectors stamp output, and is valid until the
// function returns. Made outside a call, it is an ordinary heap value.
func NewRecord() Record {
	if !eng.inCall {
		return Record{&view{}}
	}
	v := eng.arena.get()
	if c := eng.cur; c != nil {
		v.time, v.hasTime = c.timeOf()
	} else if eng.hasTimerTime {
		v.time, v.hasTime = eng.timerTime, true
	}
	return Record{v}
}

// Clone returns a copy of r, edits included, that stays valid after the
// call (it allocates). Use it to keep a record across records or batches.
func (r Record) Clone() Record {
	if r.v == nil {
		return r
	}
	v := r.v
	t, ht := v.timeOf()
	return Record{&view{
		raw:     clone(v.raw),
		value:   clone(v.value),
		key:     clone(v.keyRaw()),
		time:    t,
		hasTime: ht,
		dirty:   v.dirty,
		edits:   append([]edit(nil), v.edits...),
		vals:    clone(v.vals),
	}}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
