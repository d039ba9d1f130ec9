package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/partition"
)

// kgContent is what key group kg of operator op holds in the tests: nothing
// for every third key group, else a few bytes naming it.
func kgContent(op string, kg int) []byte {
	if kg%3 == 0 {
		return nil
	}
	return []byte(strings.Repeat(fmt.Sprintf("%s/kg%d;", op, kg), kg%4+1))
}

// testState is subtask's state of op at p: keyed state for keyed
// operators, split elements s<subtask>.<i> (subtask+2 of them), one union
// element and one committable.
func testState(op string, keyed bool, p, maxP, subtask int) SubtaskState {
	s := SubtaskState{Operator: op, Subtask: subtask, Parallelism: p, MaxParallelism: maxP}
	if keyed {
		start, end := partition.KeyGroupRange(maxP, p, subtask)
		s.FirstKeyGroup = start
		for kg := start; kg <= end; kg++ {
			s.KeyGroups = append(s.KeyGroups, kgContent(op, kg))
		}
	}
	for i := range subtask + 2 {
		s.Split = append(s.Split, fmt.Appendf(nil, "%s:s%d.%d", op, subtask, i))
	}
	s.Union = [][]byte{fmt.Appendf(nil, "%s:u%d", op, subtask)}
	s.Committables = [][]byte{fmt.Appendf(nil, "%s:c%d", op, subtask)}
	return s
}

var trigger = time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)

// writeCheckpoint writes checkpoint id of job "job" under storage with a
// keyed operator "sum" and a non-keyed "src", both at parallelism p.
func writeCheckpoint(t testing.TB, storage string, id ID, p, maxP int) string {
	t.Helper()
	w, err := CreateCheckpoint(storage, "job", id)
	if err != nil {
		t.Fatal(err)
	}
	var files []SubtaskFile
	for sub := range p {
		for _, op := range []struct {
			id    string
			keyed bool
		}{{"sum", true}, {"src", false}} {
			f, err := w.Write(testState(op.id, op.keyed, p, maxP, sub))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	if err := w.Publish(trigger, files); err != nil {
		t.Fatal(err)
	}
	return w.Dir()
}

func TestRestoreSameParallelism(t *testing.T) {
	dir := writeCheckpoint(t, t.TempDir(), 7, 2, 128)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta
	if m.Job != "job" || m.ID != 7 || m.Kind != KindCheckpoint || m.Timestamp != trigger.UnixMilli() || len(m.Operators) != 2 {
		t.Fatalf("metadata %+v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, MetadataFile+".tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary metadata left behind: %v", err)
	}
	for sub := range 2 {
		want := testState("sum", true, 2, 128, sub)
		got, err := r.Restore("sum", sub, 2, 128)
		if err != nil {
			t.Fatal(err)
		}
		for i, kg := range want.KeyGroups {
			if !bytes.Equal(got.KeyGroups[want.FirstKeyGroup+i], kg) {
				t.Errorf("subtask %d key group %d: %q, want %q", sub, want.FirstKeyGroup+i, got.KeyGroups[want.FirstKeyGroup+i], kg)
			}
			if _, ok := got.KeyGroups[want.FirstKeyGroup+i]; ok != (len(kg) > 0) {
				t.Errorf("subtask %d key group %d present %v with %d bytes", sub, want.FirstKeyGroup+i, ok, len(kg))
			}
		}
		if len(got.KeyGroups) != 43 && len(got.KeyGroups) != 42 {
			t.Errorf("subtask %d: %d key groups with state", sub, len(got.KeyGroups))
		}
		checkElems(t, "split", got.Split, want.Split)
		checkElems(t, "committables", got.Committables, want.Committables)
		checkElems(t, "union", got.Union, [][]byte{[]byte("sum:u0"), []byte("sum:u1")})
	}
	src, err := r.Restore("src", 1, 2, 128)
	if err != nil {
		t.Fatal(err)
	}
	if src.KeyGroups != nil {
		t.Errorf("non-keyed operator restored key groups %v", src.KeyGroups)
	}
	checkElems(t, "src split", src.Split, testState("src", false, 2, 128, 1).Split)
	// An operator without state in the checkpoint restores empty.
	if got, err := r.Restore("new-op", 0, 3, 64); err != nil || got.KeyGroups != nil || got.Split != nil || got.Union != nil {
		t.Errorf("unknown operator: %+v, %v", got, err)
	}
}

func checkElems(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// flinkSplit is RoundRobinOperatorStateRepartitioner.repartitionSplitState
// for one named state, transcribed loop for loop: the elements of the old
// subtasks in order, handed out baseFraction at a time plus one of the
// remainder while it lasts.
func flinkSplit(old [][][]byte, newP int) [][][]byte {
	var all [][]byte
	for _, o := range old {
		all = append(all, o...)
	}
	out := make([][][]byte, newP)
	total := len(all)
	base, remainder := total/newP, total%newP
	idx := 0
	for i := range newP {
		n := base
		if remainder > 0 {
			n++
			remainder--
		}
		out[i] = append(out[i], all[idx:idx+n]...)
		idx += n
	}
	return out
}

func TestRestoreRescales(t *testing.T) {
	for _, tc := range []struct{ from, to, maxP int }{{2, 3, 128}, {2, 1, 128}, {2, 5, 128}, {3, 2, 128}, {5, 7, 10}, {4, 10, 10}} {
		t.Run(fmt.Sprintf("%d-to-%d-max-%d", tc.from, tc.to, tc.maxP), func(t *testing.T) {
			r, err := Open(writeCheckpoint(t, t.TempDir(), 1, tc.from, tc.maxP))
			if err != nil {
				t.Fatal(err)
			}
			var oldSplit, oldCommit [][][]byte
			var union [][]byte
			for sub := range tc.from {
				s := testState("sum", true, tc.from, tc.maxP, sub)
				oldSplit = append(oldSplit, s.Split)
				oldCommit = append(oldCommit, s.Committables)
				union = append(union, s.Union...)
			}
			wantSplit, wantCommit := flinkSplit(oldSplit, tc.to), flinkSplit(oldCommit, tc.to)
			seen := map[int]int{}
			for sub := range tc.to {
				got, err := r.Restore("sum", sub, tc.to, tc.maxP)
				if err != nil {
					t.Fatal(err)
				}
				start, end := partition.KeyGroupRange(tc.maxP, tc.to, sub)
				for kg, v := range got.KeyGroups {
					if kg < start || kg > end {
						t.Errorf("subtask %d got key group %d outside its range %d..%d", sub, kg, start, end)
					}
					if !bytes.Equal(v, kgContent("sum", kg)) {
						t.Errorf("key group %d: %q", kg, v)
					}
					seen[kg]++
				}
				checkElems(t, fmt.Sprintf("subtask %d split", sub), got.Split, wantSplit[sub])
				checkElems(t, fmt.Sprintf("subtask %d committables", sub), got.Committables, wantCommit[sub])
				checkElems(t, fmt.Sprintf("subtask %d union", sub), got.Union, union)
			}
			for kg := range tc.maxP {
				if want := min(len(kgContent("sum", kg)), 1); seen[kg] != want {
					t.Errorf("key group %d restored %d times, want %d", kg, seen[kg], want)
				}
			}
		})
	}
}

// countingSource counts the bytes a restore reads and the files it opens.
type countingSource struct {
	src    source
	mu     sync.Mutex
	read   int64
	opened []string
}

type countingReaderAt struct {
	ra io.ReaderAt
	c  *countingSource
}

func (r countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := r.ra.ReadAt(b, off)
	r.c.mu.Lock()
	r.c.read += int64(n)
	r.c.mu.Unlock()
	return n, err
}

func (c *countingSource) open(name string) (io.ReaderAt, int64, io.Closer, error) {
	ra, size, cl, err := c.src.open(name)
	if err != nil {
		return nil, 0, nil, err
	}
	c.opened = append(c.opened, name)
	return countingReaderAt{ra, c}, size, cl, nil
}

func TestRestoreReadsOnlyItsKeyGroups(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateCheckpoint(dir, "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	var files []SubtaskFile
	for sub := range 4 {
		s := testState("sum", true, 4, 128, sub)
		s.Split, s.Union, s.Committables = nil, nil, nil
		f, err := w.Write(s)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := w.Publish(trigger, files); err != nil {
		t.Fatal(err)
	}
	r, err := Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	// At parallelism 8, subtask 3 owns key groups 48..63: all in old
	// subtask 1's file (32..63).
	cs := &countingSource{src: r.src}
	r.src = cs
	got, err := r.Restore("sum", 3, 8, 128)
	if err != nil {
		t.Fatal(err)
	}
	var want int64 = headerLen
	for kg := 48; kg <= 63; kg++ {
		want += int64(len(kgContent("sum", kg)))
	}
	if !slices.Equal(cs.opened, []string{"sum-1.state"}) || cs.read != want || len(got.KeyGroups) != 10 {
		t.Errorf("opened %v, read %d bytes (want %d), %d key groups", cs.opened, cs.read, want, len(got.KeyGroups))
	}
}

// damage writes a checkpoint, applies f to its directory and returns the
// error Open, Verify and Restore of every subtask give (the first of them).
func damage(t *testing.T, f func(dir string)) (string, error) {
	t.Helper()
	dir := writeCheckpoint(t, t.TempDir(), 3, 2, 128)
	f(dir)
	r, err := Open(dir)
	if err != nil {
		return dir, err
	}
	verr := r.Verify()
	var rerr error
	for _, op := range []string{"sum", "src"} {
		for sub := range 2 {
			if _, err := r.Restore(op, sub, 2, 128); err != nil && rerr == nil {
				rerr = err
			}
		}
	}
	if (verr == nil) != (rerr == nil) {
		t.Errorf("Verify says %v, Restore %v", verr, rerr)
	}
	if verr != nil {
		return dir, verr
	}
	return dir, rerr
}

func patchFile(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDamagedCheckpoints(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		is     error
		says   []string
	}{
		{"truncated state file", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, "sum-1.state"), func(b []byte) []byte { return b[:len(b)/2] })
		}, ErrTruncated, []string{"sum-1.state", "truncated"}},
		{"missing state file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "sum-0.state"))
		}, ErrTruncated, []string{"sum-0.state", "missing"}},
		{"a byte flipped in a key group", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, "sum-0.state"), func(b []byte) []byte { b[headerLen+3] ^= 1; return b })
		}, ErrChecksum, []string{"sum-0.state", "key group 1"}},
		{"a byte flipped in the split elements", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, "sum-1.state"), func(b []byte) []byte { b[len(b)-20] ^= 0x40; return b })
		}, ErrChecksum, []string{"sum-1.state", "elements"}},
		{"a state file from elsewhere", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, "sum-1.state"), func(b []byte) []byte { copy(b, "PK\x03\x04"); return b })
		}, ErrForeign, []string{"sum-1.state", "not a sluice checkpoint file"}},
		{"a longer state file", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, "src-0.state"), func(b []byte) []byte { return append(b, 0) })
		}, ErrCorrupt, []string{"src-0.state", "not the file this checkpoint wrote"}},
		{"state file of a newer format", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, "sum-0.state"), func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 3); return b })
		}, ErrVersion, []string{"sum-0.state", "version 3", "reads versions 1 to 2"}},
		{"metadata of a newer format", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, MetadataFile), func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 9); return b })
		}, ErrVersion, []string{MetadataFile, "version 9"}},
		{"a byte flipped in the metadata", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, MetadataFile), func(b []byte) []byte { b[40] ^= 2; return b })
		}, ErrChecksum, []string{MetadataFile}},
		{"truncated metadata", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, MetadataFile), func(b []byte) []byte { return b[:len(b)-7] })
		}, ErrChecksum, []string{MetadataFile, "truncated"}},
		{"metadata cut inside its header", func(t *testing.T, dir string) {
			patchFile(t, filepath.Join(dir, MetadataFile), func(b []byte) []byte { return b[:10] })
		}, ErrTruncated, []string{MetadataFile}},
		{"a foreign metadata file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, MetadataFile), []byte(`{"checkpointId": 3}`), 0o644)
		}, ErrForeign, []string{MetadataFile}},
		{"no metadata", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, MetadataFile))
		}, ErrNoMetadata, []string{"unfinished"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := damage(t, func(dir string) { tt.damage(t, dir) })
			if !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the checkpoint directory %s", err, dir)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

func TestRestoreRefusesAnotherMaxParallelism(t *testing.T) {
	r, err := Open(writeCheckpoint(t, t.TempDir(), 1, 2, 128))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Restore("sum", 0, 2, 256)
	if !errors.Is(err, ErrMaxParallelism) || !strings.Contains(err.Error(), "max parallelism 128, the job 256") || !strings.Contains(err.Error(), `"sum"`) {
		t.Errorf("error %v", err)
	}
	if _, err := r.Restore("sum", 0, 129, 128); err == nil || !strings.Contains(err.Error(), "parallelism 129") {
		t.Errorf("parallelism above max parallelism: %v", err)
	}
	if _, err := r.Restore("sum", 2, 2, 128); err == nil {
		t.Error("subtask 2 of 2 accepted")
	}
}

func TestCheckOperators(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateCheckpoint(dir, "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := w.Write(testState("sum", true, 1, 128, 0))
	b, _ := w.Write(SubtaskState{Operator: "stateless", Parallelism: 1, MaxParallelism: 128, KeyGroups: make([][]byte, 128)})
	c, _ := w.Write(testState("old-map", false, 1, 128, 0))
	if err := w.Publish(trigger, []SubtaskFile{a, b, c}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CheckOperators([]string{"sum", "old-map"}, false); err != nil {
		t.Errorf("every operator present: %v", err)
	}
	_, err = r.CheckOperators([]string{"sum", "map"}, false)
	if !errors.Is(err, ErrNonRestoredState) || !strings.Contains(err.Error(), `"old-map"`) || strings.Contains(err.Error(), "stateless") ||
		!strings.Contains(err.Error(), "--allow-non-restored-state") || !strings.Contains(err.Error(), w.Dir()) {
		t.Errorf("error %v", err)
	}
	dropped, err := r.CheckOperators([]string{"sum"}, true)
	if err != nil || len(dropped) != 1 || !strings.HasPrefix(dropped[0], `"old-map"`) {
		t.Errorf("allowed: dropped %v, %v", dropped, err)
	}
}

func TestLatestFallsBack(t *testing.T) {
	storage := t.TempDir()
	jobDir := JobDir(storage, "job")
	for id := ID(1); id <= 3; id++ {
		writeCheckpoint(t, storage, id, 2, 128)
	}
	// 3 is corrupted; 4 crashed before its metadata.
	patchFile(t, filepath.Join(CheckpointDir(storage, "job", 3), "sum-1.state"), func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b })
	w, err := CreateCheckpoint(storage, "job", 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(testState("sum", true, 2, 128, 0)); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(jobDir, "chk-04"), 0o755) // not a name Writer gives: ignored
	os.MkdirAll(filepath.Join(jobDir, "savepoint-9-abc"), 0o755)

	r, skipped, err := Latest(jobDir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.ID != 2 || r.Path != CheckpointDir(storage, "job", 2) {
		t.Errorf("latest is %d at %s, want 2", r.Meta.ID, r.Path)
	}
	if len(skipped) != 2 || !errors.Is(skipped[0].Err, ErrNoMetadata) || !strings.HasSuffix(skipped[0].Path, "chk-4") ||
		!errors.Is(skipped[1].Err, ErrChecksum) || !strings.Contains(skipped[1].Err.Error(), "sum-1.state") {
		t.Errorf("skipped %+v", skipped)
	}
	if id, err := NextID(jobDir); err != nil || id != 5 {
		t.Errorf("NextID %d, %v; want 5", id, err)
	}

	// With every checkpoint broken, the error says what was skipped.
	for id := ID(1); id <= 2; id++ {
		os.Remove(filepath.Join(CheckpointDir(storage, "job", id), "src-0.state"))
	}
	_, skipped, err = Latest(jobDir)
	if !errors.Is(err, ErrNoCheckpoint) || len(skipped) != 4 || !strings.Contains(err.Error(), "chk-1") || !strings.Contains(err.Error(), jobDir) {
		t.Errorf("all broken: %v (%d skipped)", err, len(skipped))
	}
	if _, _, err := Latest(filepath.Join(storage, "nope")); err == nil {
		t.Error("Latest of a missing directory succeeded")
	}
	if id, err := NextID(filepath.Join(storage, "nope")); err != nil || id != 1 {
		t.Errorf("NextID of a missing directory: %d, %v", id, err)
	}
}

func TestLatestRefusesMisplacedMetadata(t *testing.T) {
	storage := t.TempDir()
	writeCheckpoint(t, storage, 1, 1, 128)
	if err := os.Rename(CheckpointDir(storage, "job", 1), CheckpointDir(storage, "job", 8)); err != nil {
		t.Fatal(err)
	}
	_, skipped, err := Latest(JobDir(storage, "job"))
	if !errors.Is(err, ErrNoCheckpoint) || len(skipped) != 1 || !strings.Contains(skipped[0].Err.Error(), "checkpoint 1") {
		t.Errorf("%v, %+v", err, skipped)
	}
}

func TestRetain(t *testing.T) {
	storage := t.TempDir()
	jobDir := JobDir(storage, "job")
	for id := ID(1); id <= 6; id++ {
		writeCheckpoint(t, storage, id, 1, 128)
	}
	os.Remove(filepath.Join(CheckpointDir(storage, "job", 3), MetadataFile)) // unfinished, older than the kept
	w, _ := CreateCheckpoint(storage, "job", 7)                              // in progress, newer
	os.MkdirAll(filepath.Join(jobDir, "savepoint-2-0123"), 0o755)
	os.WriteFile(filepath.Join(jobDir, "notes"), nil, 0o644)

	removed, err := Retain(jobDir, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{CheckpointDir(storage, "job", 2), CheckpointDir(storage, "job", 3), CheckpointDir(storage, "job", 4)}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	var left []string
	entries, _ := os.ReadDir(jobDir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"chk-1", "chk-5", "chk-6", "chk-7", "notes", "savepoint-2-0123"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if _, err := os.Stat(w.Dir()); err != nil {
		t.Errorf("the checkpoint in progress went: %v", err)
	}
	if _, err := Retain(jobDir, 0); err == nil {
		t.Error("retain 0 accepted")
	}
}

func TestSavepointIsRelocatable(t *testing.T) {
	base := t.TempDir()
	w, err := CreateSavepoint(filepath.Join(base, "savepoints"), "job", 12)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := filepath.Match(filepath.Join(base, "savepoints", "savepoint-12-????????????"), w.Dir()); !ok {
		t.Errorf("savepoint directory %s", w.Dir())
	}
	var files []SubtaskFile
	for sub := range 2 {
		f, err := w.Write(testState("sum", true, 2, 128, sub))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := w.Publish(trigger, files); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(base, "elsewhere", "sp")
	os.MkdirAll(filepath.Dir(moved), 0o755)
	if err := os.Rename(w.Dir(), moved); err != nil {
		t.Fatal(err)
	}
	r, err := Open(filepath.Join(moved, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Kind != KindSavepoint || r.Meta.ID != 12 || r.Path != moved {
		t.Errorf("metadata %+v at %s", r.Meta, r.Path)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	got, err := r.Restore("sum", 0, 1, 128)
	if err != nil || len(got.KeyGroups) != 85 {
		t.Errorf("restore at 1: %d key groups, %v", len(got.KeyGroups), err)
	}
	// A second savepoint of the same id gets its own directory.
	w2, err := CreateSavepoint(filepath.Join(base, "savepoints"), "job", 12)
	if err != nil || w2.Dir() == w.Dir() {
		t.Errorf("second savepoint %v, %v", w2, err)
	}
}

func TestWriterRefuses(t *testing.T) {
	storage := t.TempDir()
	w, err := CreateCheckpoint(storage, "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	bad := testState("sum", true, 2, 128, 0)
	bad.FirstKeyGroup = 1
	if _, err := w.Write(bad); err == nil || !strings.Contains(err.Error(), "owns 0..63") {
		t.Errorf("wrong key-group range: %v", err)
	}
	if _, err := w.Write(SubtaskState{Operator: "x", Subtask: 2, Parallelism: 2, MaxParallelism: 128}); err == nil {
		t.Error("subtask 2 of 2 accepted")
	}
	if _, err := w.Write(SubtaskState{Operator: "x", Parallelism: 2, MaxParallelism: 1}); err == nil {
		t.Error("parallelism above max parallelism accepted")
	}
	if _, err := w.Write(SubtaskState{Parallelism: 1, MaxParallelism: 1}); err == nil {
		t.Error("no operator id accepted")
	}
	f0, err := w.Write(testState("sum", true, 3, 128, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(testState("sum", true, 3, 128, 0)); err == nil || !strings.Contains(err.Error(), "written twice") {
		t.Errorf("second write of a subtask: %v", err)
	}
	f2, _ := w.Write(testState("sum", true, 3, 128, 2))
	if err := w.Publish(trigger, []SubtaskFile{f0, f2}); err == nil || !strings.Contains(err.Error(), "subtask 1 of 3 has no state file") {
		t.Errorf("missing subtask: %v", err)
	}
	odd := f2
	odd.Parallelism = 4
	if err := w.Publish(trigger, []SubtaskFile{f0, odd}); err == nil || !strings.Contains(err.Error(), "parallelism") {
		t.Errorf("mixed parallelism: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.Dir(), MetadataFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused publish left metadata: %v", err)
	}
	f1, _ := w.Write(testState("sum", true, 3, 128, 1))
	if err := w.Publish(trigger, []SubtaskFile{f2, f0, f1}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(testState("other", false, 1, 1, 0)); err == nil {
		t.Error("write after publish accepted")
	}
	if _, err := CreateCheckpoint(storage, "job", 1); err == nil || !strings.Contains(err.Error(), "already a completed checkpoint") {
		t.Errorf("overwriting a completed checkpoint: %v", err)
	}
	if _, err := CreateCheckpoint(storage, "../x", 2); err == nil {
		t.Error("job name with a path accepted")
	}
	// An unfinished directory of the same id is cleared.
	w3, _ := CreateCheckpoint(storage, "job", 3)
	if _, err := w3.Write(testState("sum", true, 1, 128, 0)); err != nil {
		t.Fatal(err)
	}
	w3b, err := CreateCheckpoint(storage, "job", 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w3b.Write(testState("sum", true, 1, 128, 0)); err != nil {
		t.Errorf("rewriting an unfinished checkpoint: %v", err)
	}
	if err := w3b.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w3b.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("discarded checkpoint still there: %v", err)
	}
}

func TestWriterConcurrentSubtasks(t *testing.T) {
	w, err := CreateCheckpoint(t.TempDir(), "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	const p = 8
	files := make([]SubtaskFile, p)
	var wg sync.WaitGroup
	for sub := range p {
		wg.Go(func() {
			f, err := w.Write(testState("sum", true, p, 128, sub))
			if err != nil {
				t.Error(err)
			}
			files[sub] = f
		})
	}
	wg.Wait()
	if err := w.Publish(trigger, files); err != nil {
		t.Fatal(err)
	}
	r, err := Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestStateFileNames(t *testing.T) {
	for op, want := range map[string]string{
		"sum":      "sum-3.state",
		"my_op-2":  "my_op-2-3.state",
		"a/b":      fmt.Sprintf("a_b~%08x-3.state", crcIEEE("a/b")),
		"a_b":      "a_b-3.state",
		"..":       fmt.Sprintf("__~%08x-3.state", crcIEEE("..")),
		"séance":   fmt.Sprintf("s_ance~%08x-3.state", crcIEEE("séance")),
		longName(): fmt.Sprintf("%s~%08x-3.state", longName()[:64], crcIEEE(longName())),
	} {
		got := stateFileName(op, 3)
		if got != want {
			t.Errorf("stateFileName(%q) = %q, want %q", op, got, want)
		}
		if !validFileName(got) {
			t.Errorf("%q is not a valid name", got)
		}
	}
	for _, bad := range []string{"../x.state", "/abs.state", ".state", ".hidden.state", "a/b.state", "x.dat", MetadataFile} {
		if validFileName(bad) {
			t.Errorf("validFileName(%q) accepted", bad)
		}
	}
}

func longName() string { return strings.Repeat("x", 80) }

func TestElements(t *testing.T) {
	elems := [][]byte{nil, []byte("a"), bytes.Repeat([]byte{7}, 300)}
	b := appendElements(nil, elems)
	got, err := decodeElements(b, 3)
	if err != nil || len(got) != 3 || len(got[0]) != 0 || string(got[1]) != "a" || len(got[2]) != 300 {
		t.Errorf("round trip: %q, %v", got, err)
	}
	for name, tc := range map[string]struct {
		b []byte
		n int
	}{
		"too few":        {b, 4},
		"too many":       {b, 2},
		"short":          {b[:len(b)-1], 3},
		"count too big":  {b, 1 << 40},
		"negative count": {b, -1},
		"bad varint":     {[]byte{0x80}, 1},
	} {
		if _, err := decodeElements(tc.b, tc.n); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func crcIEEE(s string) uint32 { return crc32.ChecksumIEEE([]byte(s)) }
