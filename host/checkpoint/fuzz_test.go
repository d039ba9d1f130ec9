package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/partition"
)

// memCheckpoint builds a checkpoint in memory: the msgpack body of its
// metadata and its state files by name.
func memCheckpoint(t testing.TB, p, maxP int) ([]byte, memSource) {
	t.Helper()
	files := memSource{}
	var handles []SubtaskFile
	for sub := range p {
		for _, op := range []struct {
			id    string
			keyed bool
		}{{"sum", true}, {"src", false}} {
			st := testState(op.id, op.keyed, p, maxP, sub)
			var buf bytes.Buffer
			m, err := writeState(&buf, &st)
			if err != nil {
				t.Fatal(err)
			}
			m.Subtask, m.File = sub, stateFileName(op.id, sub)
			files[m.File] = buf.Bytes()
			handles = append(handles, SubtaskFile{Operator: op.id, Parallelism: p, MaxParallelism: maxP, SubtaskMeta: m})
		}
	}
	m, err := buildMetadata("job", 3, KindCheckpoint, trigger, handles)
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	return b[headerLen : len(b)-4], files
}

// sealMetadata wraps a msgpack body as a _metadata file: header, body and
// a correct checksum, so that the fuzzer reaches the decoder and the
// validation instead of stopping at the checksum.
func sealMetadata(body []byte) []byte {
	b := appendHeader(nil, metadataMagic)
	b = append(b, body...)
	return binary.BigEndian.AppendUint32(b, crc(b))
}

// FuzzMetadata feeds arbitrary bytes to the _metadata reader, sealed with a
// correct checksum (or raw): it must not panic, and what it accepts must
// encode and decode back to the same metadata.
func FuzzMetadata(f *testing.F) {
	body, _ := memCheckpoint(f, 2, 128)
	f.Add(body, false)
	f.Add(sealMetadata(body), true)
	small, _ := memCheckpoint(f, 1, 1)
	f.Add(small, false)
	f.Add([]byte{0x80}, false)
	f.Add([]byte{0x85, 0xa3, 'j', 'o', 'b', 0xa1, 'j', 0xa2, 'i', 'd', 0x01}, false)
	f.Fuzz(func(t *testing.T, b []byte, raw bool) {
		if !raw {
			b = sealMetadata(b)
		}
		m, err := decodeMetadata(b, "fuzz/_metadata")
		if err != nil {
			return
		}
		again, err := encodeMetadata(m)
		if err != nil {
			t.Fatalf("accepted metadata does not encode: %v", err)
		}
		m2, err := decodeMetadata(again, "again")
		if err != nil {
			t.Fatalf("re-encoded metadata does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the metadata:\n%+v\n%+v", m, m2)
		}
	})
}

// FuzzStateFile restores from arbitrary state files under arbitrary (sealed)
// metadata: every subtask's file is the fuzzed bytes, or the real file with
// the fuzzed bytes written over it. Verify and Restore at several
// parallelisms must not panic, must agree on whether the checkpoint is
// whole, and a restore that succeeds must give each new subtask only key
// groups of its range.
func FuzzStateFile(f *testing.F) {
	body, files := memCheckpoint(f, 2, 8)
	f.Add(body, files["sum-0.state"], uint16(0), false)
	f.Add(body, []byte{0xff}, uint16(14), false)
	f.Add(body, []byte("SLCKSTAT\x00\x00\x00\x01"), uint16(0), true)
	f.Add(body, []byte{}, uint16(0), true)
	f.Fuzz(func(t *testing.T, body, data []byte, at uint16, whole bool) {
		m, err := decodeMetadata(sealMetadata(body), "fuzz/_metadata")
		if err != nil {
			return
		}
		src := memSource{}
		for _, om := range m.Operators {
			for _, s := range om.Subtasks {
				if orig, ok := files[s.File]; ok && !whole {
					b := bytes.Clone(orig)
					if int(at) < len(b) {
						copy(b[at:], data)
					}
					src[s.File] = b
				} else {
					src[s.File] = data
				}
			}
		}
		r := &Reader{Path: "fuzz", Meta: m, src: src}
		verr := r.Verify()
		for _, om := range m.Operators {
			for _, p := range []int{1, om.Parallelism, min(om.Parallelism+1, om.MaxParallelism)} {
				for _, sub := range []int{0, p - 1} {
					got, err := r.Restore(om.ID, sub, p, om.MaxParallelism)
					if err != nil {
						continue
					}
					start, end := partition.KeyGroupRange(om.MaxParallelism, p, sub)
					for kg := range got.KeyGroups {
						if kg < start || kg > end {
							t.Fatalf("%s subtask %d of %d got key group %d outside %d..%d", om.ID, sub, p, kg, start, end)
						}
					}
				}
			}
		}
		if verr == nil {
			// A whole checkpoint restores at its own parallelism.
			for _, om := range m.Operators {
				for sub := range min(om.Parallelism, 64) {
					if _, err := r.Restore(om.ID, sub, om.Parallelism, om.MaxParallelism); err != nil {
						t.Fatalf("verified checkpoint does not restore %s subtask %d: %v", om.ID, sub, err)
					}
				}
			}
		}
	})
}

// An array header claiming 2^32-1 operators is refused without allocating
// them (msgpack v5.4.1 would: see decodeMetadata). Found by FuzzStateFile.
func TestMetadataHugeArrayClaim(t *testing.T) {
	body := []byte{0x81, 0xa9}
	body = append(body, "operators"...)
	body = append(body, 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0)
	_, err := decodeMetadata(sealMetadata(body), "x/_metadata")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "x/_metadata") {
		t.Errorf("error %v", err)
	}
	// Trailing bytes after the msgpack value are refused too.
	good, _ := memCheckpoint(t, 1, 1)
	if _, err := decodeMetadata(sealMetadata(append(good, 0xc0)), "x/_metadata"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
}
