package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/sluicehq/sluice/partition"
	"github.com/vmihailenco/msgpack/v5"
)

// The on-disk format, version 2 (docs/checkpoints.md has the byte layout):
//
//	<storage>/<job>/chk-<id>/           a checkpoint
//	<dir>/savepoint-<id>-<random>/      a savepoint
//	    <operator>-<subtask>.state      one state file per operator and subtask
//	    _metadata                       written last; without it there is no checkpoint
//
// Every file starts with an 8-byte magic and a big-endian uint32 format
// version. _metadata is then a msgpack Metadata and a big-endian CRC-32C of
// everything before it. A state file is then its key groups back to back,
// then its split, union and committable element lists; the offsets, lengths
// and CRC-32Cs of all of them are in _metadata, so a restore reads only the
// byte ranges it needs. Version 2 adds incremental checkpoints: a key
// group's state may be a chain of byte ranges (SubtaskMeta.Chains), some
// in the state files of older checkpoints of the same job. Version 1 (no
// chains) is still read.
const (
	// FormatVersion is the version this build writes.
	FormatVersion uint32 = 2
	// oldestVersion is the oldest version this build reads.
	oldestVersion uint32 = 1
	// maxChain bounds a key group's chain in a checkpoint this build
	// reads; the heap backend compacts one into a full copy long before.
	maxChain = 64

	metadataMagic = "SLCKMETA"
	stateMagic    = "SLCKSTAT"
	headerLen     = 12 // magic + version

	// MetadataFile is the name of a checkpoint's metadata file.
	MetadataFile = "_metadata"
	stateSuffix  = ".state"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Errors a damaged or unusable checkpoint is reported with, wrapped with the
// file and what exactly is wrong (errors.Is tells them apart).
var (
	ErrNoMetadata       = errors.New("no " + MetadataFile + " (an unfinished or aborted checkpoint)")
	ErrForeign          = errors.New("not a sluice checkpoint file")
	ErrVersion          = errors.New("unknown checkpoint format version")
	ErrTruncated        = errors.New("truncated")
	ErrChecksum         = errors.New("checksum mismatch")
	ErrCorrupt          = errors.New("corrupt")
	ErrMaxParallelism   = errors.New("max parallelism differs from the checkpoint's")
	ErrNonRestoredState = errors.New("state for an operator the job no longer has")
	ErrNoCheckpoint     = errors.New("no completed checkpoint")
)

// Metadata is the content of _metadata: which checkpoint it is and, per
// operator with state, where each subtask's state lies.
type Metadata struct {
	Job       string         `msgpack:"job"`
	ID        ID             `msgpack:"id"`
	Kind      Kind           `msgpack:"kind"`
	Timestamp int64          `msgpack:"timestamp"` // trigger time, ms since the Unix epoch
	Operators []OperatorMeta `msgpack:"operators"` // sorted by ID
}

// OperatorMeta is one operator's part of a checkpoint: one SubtaskMeta per
// subtask, in subtask order.
type OperatorMeta struct {
	ID             string        `msgpack:"id"`
	MaxParallelism int           `msgpack:"max_parallelism"`
	Parallelism    int           `msgpack:"parallelism"`
	Subtasks       []SubtaskMeta `msgpack:"subtasks"`
}

// Size is the bytes of the operator's state files.
func (o OperatorMeta) Size() int64 {
	var n int64
	for _, s := range o.Subtasks {
		n += s.Size
	}
	return n
}

// Size is the bytes of the checkpoint's state files.
func (m Metadata) Size() int64 {
	var n int64
	for _, o := range m.Operators {
		n += o.Size()
	}
	return n
}

func appendHeader(b []byte, magic string) []byte {
	b = append(b, magic...)
	return binary.BigEndian.AppendUint32(b, FormatVersion)
}

// checkHeader checks the magic and version at the start of a file named
// name.
func checkHeader(h []byte, magic, name string) error {
	m := min(len(h), len(magic))
	if string(h[:m]) != magic[:m] {
		return fmt.Errorf("%s: %w (it does not start with %q)", name, ErrForeign, magic)
	}
	if len(h) < headerLen {
		return fmt.Errorf("%s: %w: %d bytes, shorter than its header", name, ErrTruncated, len(h))
	}
	if v := binary.BigEndian.Uint32(h[len(magic):headerLen]); v < oldestVersion || v > FormatVersion {
		return fmt.Errorf("%s: %w %d (this build reads versions %d to %d)", name, ErrVersion, v, oldestVersion, FormatVersion)
	}
	return nil
}

// encodeMetadata validates m and returns the bytes of its _metadata file.
func encodeMetadata(m *Metadata) ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(appendHeader(nil, metadataMagic))
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding checkpoint %d metadata: %w", m.ID, err)
	}
	b := buf.Bytes()
	return binary.BigEndian.AppendUint32(b, crc(b)), nil
}

// decodeMetadata reads the bytes of a _metadata file named name.
func decodeMetadata(b []byte, name string) (*Metadata, error) {
	if err := checkHeader(b, metadataMagic, name); err != nil {
		return nil, err
	}
	if len(b) < headerLen+4 {
		return nil, fmt.Errorf("%s: %w: %d bytes, shorter than its header and checksum", name, ErrTruncated, len(b))
	}
	n := len(b) - 4
	if got, want := crc(b[:n]), binary.BigEndian.Uint32(b[n:]); got != want {
		return nil, fmt.Errorf("%s: %w: the content sums to %08x, the file says %08x (damaged or truncated)", name, ErrChecksum, got, want)
	}
	// msgpack v5.4.1 does not apply its allocation limit to slices of
	// structs (decodeSliceValue's noLimit is always true), so an array
	// header claiming 2^32 operators would be allocated as claimed. Skip
	// first: it allocates nothing and fails on a length the bytes cannot
	// back, so that Decode then allocates at most one element per byte.
	body := bytes.NewReader(b[headerLen:n])
	if err := msgpack.NewDecoder(body).Skip(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrCorrupt, err)
	}
	if body.Len() != 0 {
		return nil, fmt.Errorf("%s: %w: %d bytes after the metadata", name, ErrCorrupt, body.Len())
	}
	m := new(Metadata)
	if err := msgpack.NewDecoder(bytes.NewReader(b[headerLen:n])).Decode(m); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrCorrupt, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrCorrupt, err)
	}
	return m, nil
}

// validate checks that m describes a checkpoint this build can restore
// from: every operator once, each with a state file per subtask, every
// key-group range Flink's for its subtask, every state file laid out as
// Writer writes it.
func (m *Metadata) validate() error {
	if m.Kind != KindCheckpoint && m.Kind != KindSavepoint {
		return fmt.Errorf("unknown kind %d", m.Kind)
	}
	if m.ID == 0 {
		return errors.New("checkpoint id 0")
	}
	files := map[string]bool{}
	for i, op := range m.Operators {
		if op.ID == "" {
			return fmt.Errorf("operator %d has no id", i)
		}
		if i > 0 && m.Operators[i-1].ID >= op.ID {
			return fmt.Errorf("operator %q: operators out of order or repeated", op.ID)
		}
		if err := checkParallelism(op.Parallelism, op.MaxParallelism); err != nil {
			return fmt.Errorf("operator %q: %w", op.ID, err)
		}
		if len(op.Subtasks) != op.Parallelism {
			return fmt.Errorf("operator %q: %d state files for parallelism %d", op.ID, len(op.Subtasks), op.Parallelism)
		}
		for j := range op.Subtasks {
			s := &op.Subtasks[j]
			if s.Subtask != j {
				return fmt.Errorf("operator %q: state file %d is for subtask %d", op.ID, j, s.Subtask)
			}
			if !validFileName(s.File) {
				return fmt.Errorf("operator %q subtask %d: state file name %q is not a plain %s file name", op.ID, j, s.File, stateSuffix)
			}
			if files[s.File] {
				return fmt.Errorf("operator %q subtask %d: state file %s is listed twice", op.ID, j, s.File)
			}
			files[s.File] = true
			if err := s.validate(op.MaxParallelism, op.Parallelism); err != nil {
				return fmt.Errorf("operator %q subtask %d (%s): %w", op.ID, j, s.File, err)
			}
			if err := s.validateChains(m.ID, m.Kind); err != nil {
				return fmt.Errorf("operator %q subtask %d (%s): %w", op.ID, j, s.File, err)
			}
		}
	}
	return nil
}

func checkParallelism(p, maxP int) error {
	if maxP < 1 || maxP > partition.MaxParallelismUpperBound {
		return fmt.Errorf("max parallelism %d is outside [1, %d]", maxP, partition.MaxParallelismUpperBound)
	}
	if p < 1 || p > maxP {
		return fmt.Errorf("parallelism %d is outside [1, max parallelism %d]", p, maxP)
	}
	return nil
}

func (s *SubtaskMeta) validate(maxP, p int) error {
	at := int64(headerLen)
	if n := len(s.KeyGroups); n > 0 {
		start, end := partition.KeyGroupRange(maxP, p, s.Subtask)
		if s.FirstKeyGroup != start || n != end-start+1 {
			return fmt.Errorf("key groups %d..%d, but subtask %d of %d with max parallelism %d owns %d..%d",
				s.FirstKeyGroup, s.FirstKeyGroup+n-1, s.Subtask, p, maxP, start, end)
		}
	}
	if s.Native != nil {
		if len(s.KeyGroups) > 0 {
			return errors.New("both native and canonical keyed state")
		}
		if err := s.Native.validate(maxP, p, s.Subtask); err != nil {
			return err
		}
	}
	for i, e := range s.KeyGroups {
		if e.Offset != at || e.Length < 0 || e.Length > s.Size-at {
			return fmt.Errorf("key group %d at bytes %d+%d does not follow byte %d within the file's %d bytes", s.FirstKeyGroup+i, e.Offset, e.Length, at, s.Size)
		}
		at += e.Length
	}
	for _, sec := range []struct {
		name string
		s    Section
	}{{"split", s.Split}, {"union", s.Union}, {"committables", s.Committables}} {
		if sec.s.Offset != at || sec.s.Length < 0 || sec.s.Length > s.Size-at {
			return fmt.Errorf("%s elements at bytes %d+%d do not follow byte %d within the file's %d bytes", sec.name, sec.s.Offset, sec.s.Length, at, s.Size)
		}
		if sec.s.Count < 0 || int64(sec.s.Count) > sec.s.Length {
			return fmt.Errorf("%s: %d elements cannot fit %d bytes", sec.name, sec.s.Count, sec.s.Length)
		}
		at += sec.s.Length
	}
	if at != s.Size {
		return fmt.Errorf("the file's contents end at byte %d, its size is %d", at, s.Size)
	}
	return nil
}

// validateChains checks the chains of an incremental subtask of
// checkpoint id: one per key group, each a base and at most maxChain-1
// deltas, in this or an older checkpoint's plainly named files; a link in
// this checkpoint is the key group's own extent of this file, and last.
func (s *SubtaskMeta) validateChains(id ID, kind Kind) error {
	if s.Chains == nil {
		return nil
	}
	if kind != KindCheckpoint {
		return errors.New("a savepoint is self-contained, but this one has incremental chains")
	}
	if len(s.Chains) != len(s.KeyGroups) {
		return fmt.Errorf("%d key-group chains for %d key groups", len(s.Chains), len(s.KeyGroups))
	}
	for i, ch := range s.Chains {
		kg := s.FirstKeyGroup + i
		if len(ch) == 0 || len(ch) > maxChain {
			return fmt.Errorf("key group %d: a chain of %d links (1 to %d)", kg, len(ch), maxChain)
		}
		for k, l := range ch {
			switch {
			case l.Checkpoint == 0 || l.Checkpoint > id:
				return fmt.Errorf("key group %d link %d: checkpoint %d is not this one (%d) or older", kg, k, l.Checkpoint, id)
			case !validFileName(l.File):
				return fmt.Errorf("key group %d link %d: state file name %q is not a plain %s file name", kg, k, l.File, stateSuffix)
			case l.Offset < headerLen || l.Length < 0:
				return fmt.Errorf("key group %d link %d: bytes %d+%d", kg, k, l.Offset, l.Length)
			case l.Checkpoint == id && (l.File != s.File || k != len(ch)-1 ||
				l.Offset != s.KeyGroups[i].Offset || l.Length != s.KeyGroups[i].Length || l.CRC != s.KeyGroups[i].CRC):
				return fmt.Errorf("key group %d link %d: in this checkpoint, but not the key group's own bytes of %s", kg, k, s.File)
			case l.Checkpoint != id && k == len(ch)-1 && s.KeyGroups[i].Length != 0:
				return fmt.Errorf("key group %d: %d bytes in %s that its chain does not use", kg, s.KeyGroups[i].Length, s.File)
			}
		}
	}
	return nil
}

// validFileName accepts the plain base names Writer gives state files, so
// that a checkpoint can name no file outside its own directory.
func validFileName(name string) bool {
	if !strings.HasSuffix(name, stateSuffix) || len(name) == len(stateSuffix) || len(name) > 255 {
		return false
	}
	for _, r := range name {
		if !fileNameRune(r) && r != '.' && r != '~' {
			return false
		}
	}
	return name[0] != '.'
}

func fileNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// stateFileName is the state file of one operator's subtask: the operator
// id with anything but [A-Za-z0-9_-] replaced by '_' (and then a hash of
// the id, so that two ids cannot meet), a dash and the subtask.
func stateFileName(op string, subtask int) string {
	safe := strings.Map(func(r rune) rune {
		if fileNameRune(r) {
			return r
		}
		return '_'
	}, op)
	if len(safe) > 64 {
		safe = safe[:64]
	}
	if safe != op {
		safe += fmt.Sprintf("~%08x", crc32.ChecksumIEEE([]byte(op)))
	}
	return fmt.Sprintf("%s-%d%s", safe, subtask, stateSuffix)
}

// appendElements appends an element list: each element as a uvarint length
// and its bytes.
func appendElements(b []byte, elems [][]byte) []byte {
	for _, e := range elems {
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	return b
}

// decodeElements splits b into exactly count elements (sub-slices of b).
func decodeElements(b []byte, count int) ([][]byte, error) {
	if count < 0 || count > len(b) {
		return nil, fmt.Errorf("%d elements cannot fit %d bytes", count, len(b))
	}
	out := make([][]byte, 0, count)
	for i := range count {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("element %d: bad length", i)
		}
		b = b[k:]
		if n > uint64(len(b)) {
			return nil, fmt.Errorf("element %d: %d bytes, %d left", i, n, len(b))
		}
		out = append(out, b[:n:n])
		b = b[n:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the last of %d elements", len(b), count)
	}
	return out, nil
}
