package partition

// Broadcast is Flink's BroadcastPartitioner (flink-semantics.md §2): every
// record goes to every downstream subtask. The engine recognises it with
// IsBroadcast and sends each record to channels 0..N()-1 itself.
type Broadcast struct{ n int }

// Name is BROADCAST.
func (*Broadcast) Name() string { return NameBroadcast }

// N is the number of downstream channels every record goes to.
func (b *Broadcast) N() int { return b.n }

// Channel panics: a broadcast record has no single channel. Flink's
// BroadcastPartitioner.selectChannel throws UnsupportedOperationException
// the same way.
func (*Broadcast) Channel(_ int32) int {
	panic("partition: Channel called on BROADCAST: send the record to every channel (IsBroadcast)")
}
