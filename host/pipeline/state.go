package pipeline

import "go.yaml.in/yaml/v3"

// StateSpec is a state: mapping, of the pipeline (every keyed operator's
// default) or of one operator: where keyed state lives (Flink's
// state.backend.type, per job or per operator).
type StateSpec struct {
	Backend string // "heap" or "pebble"; "" when not written
	// Dir is the folder of the Pebble databases, as written (relative to
	// the pipeline file's folder); "": the host's.
	Dir string
	// DiskQuotaMiB caps what one subtask's Pebble database holds, in MiB
	// (0: no limit).
	DiskQuotaMiB int64
	Pos          Pos
	// KeyPos holds where each key was written; a key not in it was not.
	KeyPos map[string]Pos
}

// State backends.
const (
	BackendHeap   = "heap"
	BackendPebble = "pebble"
)

// StateKeys are the keys of state:.
var StateKeys = []string{"backend", "dir", "disk-quota"}

// MaxDiskQuotaMiB bounds state: disk-quota (1 PiB).
const MaxDiskQuotaMiB = 1 << 30

func (d *decoder) state(n *yaml.Node, where string) *StateSpec {
	ps, ok := d.mapping(n, where+" state")
	if !ok {
		return nil
	}
	s := &StateSpec{Pos: nodePos(deref(n)), KeyPos: map[string]Pos{}}
	for _, kv := range ps {
		k, v := kv.Key.Value, kv.Val
		s.KeyPos[k] = nodePos(kv.Key)
		what := "state " + k
		switch k {
		case "backend":
			s.Backend, _ = d.oneOf(v, what, BackendHeap, BackendPebble)
		case "dir":
			if dir, ok := d.str(v, what); ok {
				if dir == "" {
					d.errorf(v, "%s is empty: leave it out for the host's state folder", what)
				}
				s.Dir = dir
			}
		case "disk-quota":
			q, _ := d.integer(v, what+" (MiB)", 0, MaxDiskQuotaMiB)
			s.DiskQuotaMiB = int64(q)
		default:
			d.unknownKey(kv.Key, where+" state", StateKeys)
		}
	}
	return s
}

// KeyPosOf returns where key k was written, if it was (s may be nil).
func (s *StateSpec) KeyPosOf(k string) (Pos, bool) {
	if s == nil {
		return Pos{}, false
	}
	p, ok := s.KeyPos[k]
	return p, ok
}
