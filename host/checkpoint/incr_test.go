package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/partition"
)

// incrModel is what each key group of operator "sum" holds after each
// checkpoint of writeIncremental: its base and its deltas.
type incrModel map[int]struct {
	base   []byte
	deltas [][]byte
}

// writeIncremental writes checkpoint id of "job" at parallelism p: full
// (base 0) as writeCheckpoint does, or incremental on base, where key
// group kg is replaced when (kg+id)%5 == 0, gets a delta when
// (kg+id)%4 == 0 and is unchanged otherwise. It updates model.
func writeIncremental(t *testing.T, storage string, id, base ID, p int, model incrModel) string {
	t.Helper()
	w, err := CreateCheckpoint(storage, "job", id)
	if err != nil {
		t.Fatal(err)
	}
	var files []SubtaskFile
	for sub := range p {
		for _, keyed := range []bool{true, false} {
			op := map[bool]string{true: "sum", false: "src"}[keyed]
			st := testState(op, keyed, p, 128, sub)
			if keyed && base != 0 {
				st.Base = base
				st.Changes = make([]Change, len(st.KeyGroups))
				for i := range st.KeyGroups {
					kg := st.FirstKeyGroup + i
					m := model[kg]
					switch {
					case (kg+int(id))%5 == 0:
						st.Changes[i] = ChangeFull
						st.KeyGroups[i] = fmt.Appendf(nil, "full%d/kg%d", id, kg)
						m.base, m.deltas = st.KeyGroups[i], nil
					case (kg+int(id))%4 == 0:
						st.Changes[i] = ChangeDelta
						st.KeyGroups[i] = fmt.Appendf(nil, "delta%d/kg%d", id, kg)
						m.deltas = append(m.deltas, st.KeyGroups[i])
					default:
						st.Changes[i] = ChangeSame
						st.KeyGroups[i] = nil
					}
					model[kg] = m
				}
			} else if keyed {
				for i, b := range st.KeyGroups {
					model[st.FirstKeyGroup+i] = struct {
						base   []byte
						deltas [][]byte
					}{base: b}
				}
			}
			f, err := w.Write(st)
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

func checkModel(t *testing.T, r *Reader, model incrModel) {
	t.Helper()
	for _, p := range []int{1, 2, 3, 5} {
		for sub := range p {
			got, err := r.Restore("sum", sub, p, 128)
			if err != nil {
				t.Fatal(err)
			}
			start, end := partition.KeyGroupRange(128, p, sub)
			for kg := start; kg <= end; kg++ {
				want := model[kg]
				if !bytes.Equal(got.KeyGroups[kg], want.base) {
					t.Fatalf("%s at p %d: key group %d base %q, want %q", r.Path, p, kg, got.KeyGroups[kg], want.base)
				}
				if fmt.Sprintf("%q", got.Deltas[kg]) != fmt.Sprintf("%q", want.deltas) {
					t.Fatalf("%s at p %d: key group %d deltas %q, want %q", r.Path, p, kg, got.Deltas[kg], want.deltas)
				}
			}
			if len(got.KeyGroups) > end-start+1 || len(got.Deltas) > end-start+1 {
				t.Fatalf("p %d subtask %d: key groups outside its range", p, sub)
			}
		}
	}
}

func TestIncrementalChains(t *testing.T) {
	storage := t.TempDir()
	model := incrModel{}
	full := writeIncremental(t, storage, 1, 0, 2, model)
	var models []incrModel
	snap := func() {
		c := incrModel{}
		for k, v := range model {
			c[k] = v
		}
		models = append(models, c)
	}
	snap()
	for id := ID(2); id <= 4; id++ {
		writeIncremental(t, storage, id, id-1, 2, model)
		snap()
	}
	for i, m := range models {
		r, err := Open(CheckpointDir(storage, "job", ID(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		checkModel(t, r, m) // at parallelisms 1, 2, 3, 5: rescaled from chains
	}
	// the incremental checkpoints' own files are much smaller
	r1, _ := Open(full)
	r4, _ := Open(CheckpointDir(storage, "job", 4))
	sum1, _ := r1.Operator("sum")
	sum4, _ := r4.Operator("sum")
	if sum4.Size()*2 > sum1.Size() {
		t.Fatalf("checkpoint 4 wrote %d bytes of keyed state, the full checkpoint 1 %d", sum4.Size(), sum1.Size())
	}
	if st := sum4.Subtasks[0]; len(st.Chains) != len(st.KeyGroups) {
		t.Fatalf("checkpoint 4 has %d chains", len(st.Chains))
	}
}

// Retain keeps the files of removed checkpoints that kept ones reference,
// and removes them once nothing does.
func TestRetainKeepsReferencedFiles(t *testing.T) {
	storage := t.TempDir()
	jobDir := JobDir(storage, "job")
	model := incrModel{}
	writeIncremental(t, storage, 1, 0, 2, model)
	writeIncremental(t, storage, 2, 1, 2, model)
	writeIncremental(t, storage, 3, 2, 2, model)
	removed, err := Retain(jobDir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 {
		t.Fatalf("removed %v, though checkpoint 3 references files of both", removed)
	}
	for _, id := range []ID{1, 2} {
		dir := CheckpointDir(storage, "job", id)
		if _, err := os.Stat(filepath.Join(dir, MetadataFile)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("checkpoint %d still has its metadata: %v", id, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "src-0.state")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("checkpoint %d still has an unreferenced file: %v", id, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "sum-0.state")); err != nil {
			t.Fatalf("checkpoint %d lost a referenced file: %v", id, err)
		}
	}
	r, skipped, err := Latest(jobDir)
	if err != nil || len(skipped) != 0 || r.Meta.ID != 3 {
		t.Fatalf("Latest: %v %v %v", r, skipped, err)
	}
	checkModel(t, r, model)
	// a full checkpoint 4 references nothing: the pruned ones go
	writeIncremental(t, storage, 4, 0, 2, incrModel{})
	writeIncremental(t, storage, 5, 4, 2, incrModel{4: {}}) // on 4: 3 is not referenced
	removed, err = Retain(jobDir, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{CheckpointDir(storage, "job", 1), CheckpointDir(storage, "job", 2), CheckpointDir(storage, "job", 3)}
	if fmt.Sprint(removed) != fmt.Sprint(want) {
		t.Fatalf("removed %v, want %v", removed, want)
	}
	if _, err := os.Stat(CheckpointDir(storage, "job", 4)); err != nil {
		t.Fatal("checkpoint 4, referenced by 5, went:", err)
	}
	if _, err := Open(CheckpointDir(storage, "job", 5)); err != nil {
		t.Fatal(err)
	}
}

// An unfinished checkpoint's references (its _refs) are kept while it is
// protected (in progress).
func TestRetainKeepsInProgressReferences(t *testing.T) {
	storage := t.TempDir()
	jobDir := JobDir(storage, "job")
	model := incrModel{}
	writeIncremental(t, storage, 1, 0, 1, model)
	writeIncremental(t, storage, 2, 0, 1, model)
	w, err := CreateCheckpoint(storage, "job", 3)
	if err != nil {
		t.Fatal(err)
	}
	st := testState("sum", true, 1, 128, 0)
	st.Base = 1
	st.Changes = make([]Change, len(st.KeyGroups))
	for i := range st.KeyGroups {
		st.Changes[i], st.KeyGroups[i] = ChangeSame, nil
	}
	if _, err := w.Write(st); err != nil {
		t.Fatal(err)
	}
	if _, err := Retain(jobDir, 1, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(CheckpointDir(storage, "job", 1), "sum-0.state")); err != nil {
		t.Fatal("a file the checkpoint in progress references went:", err)
	}
}

// A damaged or missing file a chain references makes the checkpoint
// unusable with an error naming the file and the checkpoints; Latest
// falls back to the newest checkpoint that does not depend on it.
func TestDamagedReferencedFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(path string)
		want   error
	}{
		{"missing", func(p string) { os.Remove(p) }, ErrTruncated},
		{"corrupt", func(p string) {
			b, _ := os.ReadFile(p)
			for i := headerLen; i < len(b); i++ {
				b[i] ^= 0x55
			}
			os.WriteFile(p, b, 0o644)
		}, ErrChecksum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storage := t.TempDir()
			model := incrModel{}
			writeIncremental(t, storage, 1, 0, 2, model)
			writeIncremental(t, storage, 2, 1, 2, model)
			writeIncremental(t, storage, 3, 2, 2, model)
			file := filepath.Join(CheckpointDir(storage, "job", 2), "sum-1.state")
			tc.damage(file)
			r3, err := Open(CheckpointDir(storage, "job", 3))
			if err != nil {
				t.Fatal(err)
			}
			err = r3.Verify()
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "checkpoint 3") {
				t.Fatalf("Verify: %v, want %v naming %s and checkpoint 3", err, tc.want, file)
			}
			_, err = r3.Restore("sum", 1, 2, 128)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), file) {
				t.Fatalf("Restore: %v", err)
			}
			r, skipped, err := Latest(JobDir(storage, "job"))
			if err != nil || r.Meta.ID != 1 || len(skipped) != 2 {
				t.Fatalf("Latest: %v, skipped %v, %v; want checkpoint 1", r, skipped, err)
			}
		})
	}
}

func TestIncrementalRefused(t *testing.T) {
	storage := t.TempDir()
	writeIncremental(t, storage, 1, 0, 2, incrModel{})
	st := testState("sum", true, 2, 128, 0)
	st.Base, st.Changes = 1, make([]Change, len(st.KeyGroups))
	sp, err := CreateSavepoint(t.TempDir(), "job", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Write(st); err == nil || !strings.Contains(err.Error(), "self-contained") {
		t.Fatalf("a savepoint took incremental state: %v", err)
	}
	w, err := CreateCheckpoint(storage, "job", 2)
	if err != nil {
		t.Fatal(err)
	}
	st3 := testState("sum", true, 3, 128, 0)
	st3.Base, st3.Changes = 1, make([]Change, len(st3.KeyGroups))
	if _, err := w.Write(st3); err == nil || !strings.Contains(err.Error(), "parallelism") {
		t.Fatalf("incremental on a base at another parallelism: %v", err)
	}
	st.Base = 9
	if _, err := w.Write(st); err == nil {
		t.Fatal("incremental on a newer base was written")
	}
}

// The metadata's chains are checked as the rest of it is.
func TestChainValidation(t *testing.T) {
	storage := t.TempDir()
	model := incrModel{}
	writeIncremental(t, storage, 1, 0, 2, model)
	writeIncremental(t, storage, 2, 1, 2, model)
	r, err := Open(CheckpointDir(storage, "job", 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(m *Metadata)
		want   string
	}{
		{"a newer checkpoint", func(m *Metadata) { m.Operators[1].Subtasks[0].Chains[1][0].Checkpoint = 9 }, "is not this one (2) or older"},
		{"a path", func(m *Metadata) { m.Operators[1].Subtasks[0].Chains[1][0].File = "../x.state" }, "not a plain"},
		{"an empty chain", func(m *Metadata) { m.Operators[1].Subtasks[0].Chains[1] = nil }, "a chain of 0 links"},
		{"too few chains", func(m *Metadata) { s := &m.Operators[1].Subtasks[0]; s.Chains = s.Chains[1:] }, "key-group chains for"},
		{"in a savepoint", func(m *Metadata) { m.Kind = KindSavepoint }, "self-contained"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := encodeMetadata(r.Meta)
			m, err := decodeMetadata(b, "x")
			if err != nil {
				t.Fatal(err)
			}
			if m.Operators[1].ID != "sum" {
				t.Fatal("operators", m.Operators[1].ID)
			}
			tc.change(m)
			if _, err := encodeMetadata(m); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}

// A restore from chains reads, of every file, the header and the links of
// its own key groups, and nothing else.
func TestChainRestoreReadsOnlyItsKeyGroups(t *testing.T) {
	storage := t.TempDir()
	model := incrModel{}
	writeIncremental(t, storage, 1, 0, 2, model)
	writeIncremental(t, storage, 2, 1, 2, model)
	writeIncremental(t, storage, 3, 2, 2, model)
	r, err := Open(CheckpointDir(storage, "job", 3))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Meta.Operators { // keyed state only: no element lists to read
		for j := range r.Meta.Operators[i].Subtasks {
			s := &r.Meta.Operators[i].Subtasks[j]
			s.Split.Count, s.Union.Count, s.Committables.Count = 0, 0, 0
		}
	}
	cs := &countingSource{src: r.src}
	r.src = cs
	// at parallelism 5, subtask 2 owns key groups 52..76: in both old subtasks
	got, err := r.Restore("sum", 2, 5, 128)
	if err != nil {
		t.Fatal(err)
	}
	om, _ := r.Operator("sum")
	want := int64(headerLen) * int64(len(cs.opened))
	files := map[string]bool{}
	for _, s := range om.Subtasks {
		for k, ch := range s.Chains {
			kg := s.FirstKeyGroup + k
			if kg < 52 || kg > 76 {
				continue
			}
			for _, l := range ch {
				want += l.Length
				if l.Length > 0 {
					if l.Checkpoint == 3 {
						files[l.File] = true
					} else {
						files[filepath.Join("..", refName(l.Checkpoint, l.File))] = true
					}
				}
			}
		}
	}
	if cs.read != want || len(cs.opened) != len(files) {
		t.Fatalf("opened %v (want %d files), read %d bytes, want %d", cs.opened, len(files), cs.read, want)
	}
	for _, f := range cs.opened {
		if !files[f] {
			t.Fatalf("opened %s, which holds none of the key groups", f)
		}
	}
	if len(got.KeyGroups) == 0 || len(got.Deltas) == 0 {
		t.Fatalf("%d bases, %d deltas", len(got.KeyGroups), len(got.Deltas))
	}
}
