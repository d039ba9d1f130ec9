package partition

// global is Flink's GlobalPartitioner (flink-semantics.md §2): every
// record goes to downstream subtask 0.
type global struct{}

func (global) Name() string        { return NameGlobal }
func (global) Channel(_ int32) int { return 0 }
