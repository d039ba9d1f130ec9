package plugin

// MemoryBytes returns the size of the linear memory of the operator's live
// instance, 0 when it has none. Call it from the goroutine that uses the
// operator (between calls), as the engine's subtask does; a server's
// metrics read the value it stored.
func (o *Operator) MemoryBytes() uint64 { return o.r.memoryBytes() }

// MemoryBytes returns the size of the linear memory of the partitioner's
// or key selector's live instance, 0 when it has none. Same rule as
// Operator.MemoryBytes.
func (e *edgeAdapter) MemoryBytes() uint64 { return e.r.memoryBytes() }

func (r *runner) memoryBytes() uint64 {
	if r.inst == nil || r.inst.dead || r.inst.mem == nil {
		return 0
	}
	return uint64(r.inst.mem.Size())
}
