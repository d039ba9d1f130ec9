package sdktest

import (
	"github.com/sluicehq/sluice/abi"
)

// fakeHost is the in-memory host behind a run: it hands out side-output
// ports, copies emitted batches, keeps the error text of the current call
// and holds keyed state, as the real host does with a module's memory.
type fakeHost struct {
	ports      map[string]int32
	tags       []string // tags[port] is the tag of port ("" for 0)
	unconsumed map[string]bool
	pending    []emission // emitted during the current call
	errText    string
	state      map[stateKey][]byte
}

type emission struct {
	port  int32
	buf   []byte
	count int
}

type stateKey struct {
	slot int32
	key  string
}

func newFakeHost(unconsumed []string) *fakeHost {
	h := &fakeHost{
		ports:      map[string]int32{"": 0},
		tags:       []string{""},
		unconsumed: map[string]bool{},
		state:      map[stateKey][]byte{},
	}
	for _, t := range unconsumed {
		h.unconsumed[t] = true
	}
	return h
}

// begin starts a call: no output, no error text yet.
func (h *fakeHost) begin() { h.pending, h.errText = nil, "" }

func (h *fakeHost) Emit(port int32, buf []byte, count int32) int32 {
	if port < 0 || int(port) >= len(h.tags) || count < 0 {
		return int32(abi.StatusHost)
	}
	h.pending = append(h.pending, emission{port: port, buf: append([]byte(nil), buf...), count: int(count)})
	return int32(abi.StatusOK)
}

func (h *fakeHost) Port(tag string) int32 {
	if len(tag) > abi.MaxTagLen {
		return -1
	}
	if h.unconsumed[tag] {
		return -1
	}
	if p, ok := h.ports[tag]; ok {
		return p
	}
	p := int32(len(h.tags))
	h.ports[tag] = p
	h.tags = append(h.tags, tag)
	return p
}

func (h *fakeHost) Error(text string) {
	if len(text) > abi.MaxErrorText {
		text = text[:abi.MaxErrorText]
	}
	h.errText = text
}

func (h *fakeHost) StateGet(slot int32, key, buf []byte) int32 {
	v, ok := h.state[stateKey{slot, string(key)}]
	if !ok {
		return -1
	}
	if len(v) <= cap(buf) {
		copy(buf[:cap(buf)], v)
	}
	return int32(len(v))
}

func (h *fakeHost) StatePut(slot int32, key, val []byte) int32 {
	if len(key) == 0 {
		return int32(abi.StatusState)
	}
	h.state[stateKey{slot, string(key)}] = append([]byte(nil), val...)
	return int32(abi.StatusOK)
}

func (h *fakeHost) StateDel(slot int32, key []byte) int32 {
	delete(h.state, stateKey{slot, string(key)})
	return int32(abi.StatusOK)
}
