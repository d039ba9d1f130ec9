package sdktest

import (
	"encoding/binary"
	"sort"
	"strconv"

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
	kinds      *kindsState // list and map state, made on first use
	timers     *timerState // made on first use
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
	if !h.claim(slot, "value") {
		return int32(abi.StatusState)
	}
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
	if len(key) == 0 || !h.claim(slot, "value") {
		return int32(abi.StatusState)
	}
	h.state[stateKey{slot, string(key)}] = append([]byte(nil), val...)
	return int32(abi.StatusOK)
}

func (h *fakeHost) StateDel(slot int32, key []byte) int32 {
	delete(h.state, stateKey{slot, string(key)})
	return int32(abi.StatusOK)
}

// List and map state of the fake host (hostcall.KindsHost): plain Go lists
// and maps per (slot, key), a kind per slot, so that the SDK's wrappers are
// tested against an implementation of the ABI other than the host's.

type kindsState struct {
	kinds map[int32]string // slot -> "value", "list", "map"
	lists map[stateKey][][]byte
	maps  map[stateKey]map[string][]byte
}

func (h *fakeHost) ks() *kindsState {
	if h.kinds == nil {
		h.kinds = &kindsState{kinds: map[int32]string{}, lists: map[stateKey][][]byte{}, maps: map[stateKey]map[string][]byte{}}
	}
	return h.kinds
}

// claim refuses a slot used as two kinds (abi: a slot holds one kind).
func (h *fakeHost) claim(slot int32, kind string) bool {
	k := h.ks()
	if old, ok := k.kinds[slot]; ok && old != kind {
		h.errText = "state slot " + itoa(int(slot)) + " holds " + old + " state, used as " + kind
		return false
	}
	k.kinds[slot] = kind
	return true
}

func giveBack(b []byte, buf []byte) int32 {
	if len(b) <= cap(buf) {
		copy(buf[:cap(buf)], b)
	}
	return int32(len(b))
}

func (h *fakeHost) ListGet(slot int32, key, buf []byte) int32 {
	if !h.claim(slot, "list") {
		return int32(abi.StatusState)
	}
	l, ok := h.ks().lists[stateKey{slot, string(key)}]
	if !ok {
		return -1
	}
	var b []byte
	for _, e := range l {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return giveBack(b, buf)
}

func (h *fakeHost) ListAppend(slot int32, key, val []byte) int32 {
	if len(key) == 0 || !h.claim(slot, "list") {
		return int32(abi.StatusState)
	}
	k := stateKey{slot, string(key)}
	h.ks().lists[k] = append(h.ks().lists[k], append([]byte(nil), val...))
	return int32(abi.StatusOK)
}

func (h *fakeHost) ListUpdate(slot int32, key, wire []byte) int32 {
	if len(key) == 0 || !h.claim(slot, "list") {
		return int32(abi.StatusState)
	}
	var l [][]byte
	for b := wire; len(b) > 0; {
		if len(b) < 4 || uint64(binary.LittleEndian.Uint32(b)) > uint64(len(b)-4) {
			return int32(abi.StatusState)
		}
		n := binary.LittleEndian.Uint32(b)
		l = append(l, append([]byte(nil), b[4:4+n]...))
		b = b[4+n:]
	}
	k := stateKey{slot, string(key)}
	if len(l) == 0 {
		delete(h.ks().lists, k)
	} else {
		h.ks().lists[k] = l
	}
	return int32(abi.StatusOK)
}

func (h *fakeHost) MapGet(slot int32, key []byte, ukey string, buf []byte) int32 {
	if !h.claim(slot, "map") {
		return int32(abi.StatusState)
	}
	v, ok := h.ks().maps[stateKey{slot, string(key)}][ukey]
	if !ok {
		return -1
	}
	return giveBack(v, buf)
}

func (h *fakeHost) MapPut(slot int32, key []byte, ukey string, val []byte) int32 {
	if len(key) == 0 || !h.claim(slot, "map") {
		return int32(abi.StatusState)
	}
	k := stateKey{slot, string(key)}
	m := h.ks().maps[k]
	if m == nil {
		m = map[string][]byte{}
		h.ks().maps[k] = m
	}
	m[ukey] = append([]byte(nil), val...)
	return int32(abi.StatusOK)
}

func (h *fakeHost) MapDel(slot int32, key []byte, ukey string) int32 {
	if !h.claim(slot, "map") {
		return int32(abi.StatusState)
	}
	k := stateKey{slot, string(key)}
	delete(h.ks().maps[k], ukey)
	if len(h.ks().maps[k]) == 0 {
		delete(h.ks().maps, k)
	}
	return int32(abi.StatusOK)
}

func (h *fakeHost) MapContains(slot int32, key []byte, ukey string) int32 {
	if !h.claim(slot, "map") {
		return int32(abi.StatusState)
	}
	if _, ok := h.ks().maps[stateKey{slot, string(key)}][ukey]; ok {
		return 1
	}
	return 0
}

func (h *fakeHost) MapEntries(slot int32, key, buf []byte) int32 {
	if !h.claim(slot, "map") {
		return int32(abi.StatusState)
	}
	m, ok := h.ks().maps[stateKey{slot, string(key)}]
	if !ok {
		return -1
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(k)))
		b = append(b, k...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m[k])))
		b = append(b, m[k]...)
	}
	return giveBack(b, buf)
}

func (h *fakeHost) Clear(slot int32, key []byte) int32 {
	k := stateKey{slot, string(key)}
	delete(h.state, k)
	delete(h.ks().lists, k)
	delete(h.ks().maps, k)
	return int32(abi.StatusOK)
}

func itoa(n int) string {
	return strconv.Itoa(n)
}
