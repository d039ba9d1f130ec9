package connector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

// checkpointedFile writes n records as JSON lines (every tenth line blank,
// line bad a malformed record) or CSV, and returns every record's JSON.
func checkpointedFile(t *testing.T, dir string, csv bool, n, bad int) []string {
	var text strings.Builder
	var want []string
	if csv {
		text.WriteString("id,name\n")
	}
	for i := range n {
		switch {
		case csv:
			fmt.Fprintf(&text, "%d,n%d\n", i, i)
		case i == bad:
			text.WriteString("{not json\n")
		default:
			fmt.Fprintf(&text, "{\"id\":%d,\"name\":\"n%d\"}\n", i, i)
		}
		if i != bad || csv {
			want = append(want, fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i))
		}
		if !csv && i%10 == 9 {
			text.WriteString("\n")
		}
	}
	name := "in.jsonl"
	if csv {
		name = "in.csv"
	}
	writeFile(t, dir, name, text.String())
	return want
}

// TestFileSourceRestoresItsPosition: subtasks snapshot their position in
// their first Emit (as the engine does when a barrier is due), run on, and
// a job restored from the snapshot at parallelism 1, 2 and 3 emits every
// record the snapshot had not, once: with what was emitted before it,
// the whole file, nothing lost or repeated. A bad line after the position
// is reported at its own line.
func TestFileSourceRestoresItsPosition(t *testing.T) {
	for _, csv := range []bool{false, true} {
		t.Run(fmt.Sprintf("csv=%v", csv), func(t *testing.T) {
			dir := t.TempDir()
			const n, bad = 1500, 1400
			want := checkpointedFile(t, dir, csv, n, bad)
			path := "in.jsonl"
			if csv {
				path = "in.csv"
			}
			spec := sourceSpec("read", "file", map[string]any{"path": path, "format": map[bool]string{false: "json", true: "csv"}[csv]})
			var badLines []int
			b := &Builtin{Root: dir, BadRecord: func(e *RecordError) error { badLines = append(badLines, e.Line); return nil }}

			const oldP = 2
			var before []string
			var union [][]byte
			for sub := range oldP {
				src, err := b.Source(spec, sub, oldP)
				if err != nil {
					t.Fatal(err)
				}
				cs, ok := src.(runtime.CheckpointedSource)
				if !ok {
					t.Fatalf("the file source is no CheckpointedSource")
				}
				c := &collector{t: t}
				c.onEmit = func(c *collector) {
					if c.batches == 1 {
						_, u, err := cs.SnapshotState(1)
						if err != nil {
							t.Fatal(err)
						}
						union = append(union, u...)
						before = append(before, c.jsons()...)
					}
				}
				if err := src.Open(&runtime.OpenContext{Operator: "read", Subtask: sub, Parallelism: oldP}); err != nil {
					t.Fatal(err)
				}
				if err := src.Run(context.Background(), c); err != nil {
					t.Fatal(err)
				}
				src.Close()
			}
			if len(before) != 2*maxBatchRecords || len(union) != oldP {
				t.Fatalf("the snapshots saw %d records and %d positions", len(before), len(union))
			}
			for _, newP := range []int{1, 2, 3} {
				got := slices.Clone(before)
				badLines = nil
				for sub := range newP {
					src, err := b.Source(spec, sub, newP)
					if err != nil {
						t.Fatal(err)
					}
					c := &collector{t: t}
					if err := src.Open(&runtime.OpenContext{Operator: "read", Subtask: sub, Parallelism: newP}); err != nil {
						t.Fatal(err)
					}
					if err := src.(runtime.CheckpointedSource).RestoreState(checkpoint.Restore{Union: union}); err != nil {
						t.Fatal(err)
					}
					if err := src.Run(context.Background(), c); err != nil {
						t.Fatal(err)
					}
					src.Close()
					got = append(got, c.jsons()...)
				}
				sortByID(got)
				if !slices.Equal(got, want) {
					t.Fatalf("restored at parallelism %d: %d records, want %d (each once)", newP, len(got), len(want))
				}
				if !csv && !slices.Equal(badLines, []int{bad + 1 + bad/10}) {
					t.Errorf("restored at parallelism %d: bad lines %v, want [%d]", newP, badLines, bad+1+bad/10)
				}
			}
			// a file shorter than the position is refused, naming it
			if !csv {
				writeFile(t, dir, path, "{}\n")
				src, _ := b.Source(spec, 0, 1)
				if err := src.Open(&runtime.OpenContext{Operator: "read", Parallelism: 1}); err != nil {
					t.Fatal(err)
				}
				err := src.(runtime.CheckpointedSource).RestoreState(checkpoint.Restore{Union: union})
				wantErrContaining(t, err, "in.jsonl has 3 bytes", "the file changed")
				err = src.(runtime.CheckpointedSource).RestoreState(checkpoint.Restore{Union: [][]byte{{9, 9}}})
				wantErrContaining(t, err, "restoring the position", "not a file connector state")
				src.Close()
			}
		})
	}
}

// sortByID sorts records {"id":N,...} by N.
func sortByID(records []string) {
	id := func(s string) int {
		var n int
		fmt.Sscanf(s, `{"id":%d`, &n)
		return n
	}
	sort.SliceStable(records, func(i, j int) bool { return id(records[i]) < id(records[j]) })
}

// listDir is the folder's names, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type txSink interface {
	runtime.Operator
	runtime.Snapshotter
	runtime.CheckpointListener
}

func openTxSink(t *testing.T, b *Builtin, path string, sub, par int) txSink {
	t.Helper()
	s, ok := openSink(t, b, "out", "file", map[string]any{"path": path}, sub, par).(txSink)
	if !ok {
		t.Fatal("the file sink is no Snapshotter and CheckpointListener")
	}
	return s
}

func process(t *testing.T, s runtime.Operator, values ...string) {
	t.Helper()
	batch, n := batchOf(t, values...)
	if err := s.Process(0, batch, n, nil); err != nil {
		t.Fatal(err)
	}
}

// TestFileSinkTwoPhaseCommit follows Flink's FileSink: records go to a
// hidden in-progress part; a checkpoint's snapshot closes it as a
// committable, its completion renames it; a crash leaves the uncommitted
// part hidden, and the restore commits what the checkpoint pre-committed
// (again: idempotent) and deletes the rest; the end of the input commits.
func TestFileSinkTwoPhaseCommit(t *testing.T) {
	dir := t.TempDir()
	b := &Builtin{Root: dir, Checkpointed: true}
	s := openTxSink(t, b, "out/r.jsonl", 0, 1)
	out := filepath.Join(dir, "out")
	process(t, s, `{"a":1}`)
	if got := listDir(t, out); !slices.Equal(got, []string{".r-0-0.jsonl.inprogress"}) {
		t.Fatalf("before a checkpoint: %v", got)
	}
	st1, err := s.SnapshotState(1)
	if err != nil || len(st1.Committables) != 1 {
		t.Fatalf("snapshot 1: %+v, %v", st1, err)
	}
	process(t, s, `{"a":2}`)
	if got := listDir(t, out); !slices.Equal(got, []string{".r-0-0.jsonl.inprogress", ".r-0-1.jsonl.inprogress"}) {
		t.Fatalf("checkpoint 1 pending: %v (a reader must see nothing)", got)
	}
	if err := s.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, filepath.Join(out, "r-0-0.jsonl")); got != "{\"a\":1}\n" {
		t.Fatalf("committed part 0: %q", got)
	}
	s.NotifyCheckpointAborted(2) // an aborted checkpoint changes nothing
	st2, err := s.SnapshotState(3)
	if err != nil || len(st2.Committables) != 1 {
		t.Fatalf("snapshot 3: %+v, %v", st2, err)
	}
	process(t, s, `{"a":3}`)             // after checkpoint 3: lost in the crash
	if err := s.Close(nil); err != nil { // the crash
		t.Fatal(err)
	}
	if got := listDir(t, out); !slices.Equal(got, []string{".r-0-1.jsonl.inprogress", ".r-0-2.jsonl.inprogress", "r-0-0.jsonl"}) {
		t.Fatalf("after the crash: %v", got)
	}
	// restored from checkpoint 3 (twice: a restore that crashed before
	// its first checkpoint is restored again)
	for range 2 {
		r := openTxSink(t, b, "out/r.jsonl", 0, 1)
		if err := r.RestoreState(checkpoint.Restore{Committables: st2.Committables, Union: st2.Union}); err != nil {
			t.Fatal(err)
		}
		if got := listDir(t, out); !slices.Equal(got, []string{"r-0-0.jsonl", "r-0-1.jsonl"}) {
			t.Fatalf("after the restore: %v", got)
		}
		r.Close(nil)
	}
	r := openTxSink(t, b, "out/r.jsonl", 0, 1)
	if err := r.RestoreState(checkpoint.Restore{Committables: st2.Committables, Union: st2.Union}); err != nil {
		t.Fatal(err)
	}
	process(t, r, `{"a":4}`)
	// a part that is gone under both names cannot be committed: said so
	lost := openTxSink(t, b, "elsewhere/r.jsonl", 0, 1)
	err = lost.RestoreState(checkpoint.Restore{Committables: st2.Committables})
	wantErrContaining(t, err, "cannot commit part .r-0-1.jsonl.inprogress", "neither it nor r-0-1.jsonl exists", "removed or moved")
	lost.Close(nil)
	if err := r.Close(&collector{t: t}); err != nil { // the end of the input commits
		t.Fatal(err)
	}
	var all strings.Builder
	for _, name := range listDir(t, out) {
		all.WriteString(readText(t, filepath.Join(out, name)))
	}
	if got := listDir(t, out); !slices.Equal(got, []string{"r-0-0.jsonl", "r-0-1.jsonl", "r-0-2.jsonl"}) || all.String() != "{\"a\":1}\n{\"a\":2}\n{\"a\":4}\n" {
		t.Fatalf("the output: %v %q", got, all.String())
	}
	// a fresh start (no restore) removes the parts of an earlier run
	f := openTxSink(t, b, "out/r.jsonl", 0, 1)
	process(t, f, `{"a":5}`)
	if err := f.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, out); !slices.Equal(got, []string{"r-0-0.jsonl"}) || readText(t, filepath.Join(out, "r-0-0.jsonl")) != "{\"a\":5}\n" {
		t.Fatalf("a fresh start: %v", got)
	}
}

// TestFileSinkRestoreAtAnotherParallelism: two subtasks' checkpoint restored
// at parallelism 1: the one subtask commits both committables and deletes
// both subtasks' parts written after the checkpoint.
func TestFileSinkRestoreAtAnotherParallelism(t *testing.T) {
	dir := t.TempDir()
	b := &Builtin{Root: dir, Checkpointed: true}
	var restore checkpoint.Restore
	for sub := range 2 {
		s := openTxSink(t, b, "r.jsonl", sub, 2)
		process(t, s, fmt.Sprintf(`{"s":%d}`, sub))
		st, err := s.SnapshotState(1)
		if err != nil {
			t.Fatal(err)
		}
		restore.Committables = append(restore.Committables, st.Committables...)
		restore.Union = append(restore.Union, st.Union...)
		process(t, s, `{"late":true}`)
		s.Close(nil)
	}
	s := openTxSink(t, b, "r.jsonl", 0, 1)
	if err := s.RestoreState(restore); err != nil {
		t.Fatal(err)
	}
	process(t, s, `{"after":1}`)
	if err := s.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	got := listDir(t, dir)
	if !slices.Equal(got, []string{"r-0-0.jsonl", "r-0-1.jsonl", "r-1-0.jsonl"}) {
		t.Fatalf("parts %v", got)
	}
	if a, c := readText(t, filepath.Join(dir, "r-0-0.jsonl")), readText(t, filepath.Join(dir, "r-0-1.jsonl")); a != "{\"s\":0}\n" || c != "{\"after\":1}\n" {
		t.Fatalf("parts of subtask 0: %q %q", a, c)
	}
}

// TestFileSinkCSVPartsHaveHeaders: each committed CSV part is a whole CSV
// file.
func TestFileSinkCSVPartsHaveHeaders(t *testing.T) {
	dir := t.TempDir()
	b := &Builtin{Root: dir, Checkpointed: true}
	s := openTxSink(t, b, "r.csv", 0, 1)
	process(t, s, `{"a":1,"b":"x"}`)
	if _, err := s.SnapshotState(1); err != nil {
		t.Fatal(err)
	}
	process(t, s, `{"b":"y","a":2}`)
	if err := s.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	if a, c := readText(t, filepath.Join(dir, "r-0-0.csv")), readText(t, filepath.Join(dir, "r-0-1.csv")); a != "a,b\n1,x\n" || c != "a,b\n2,y\n" {
		t.Fatalf("parts %q %q", a, c)
	}
}

// TestFileSinkWithoutCheckpointsIsUnchanged: without Checkpointed the sink
// writes its one file, and its snapshot is empty.
func TestFileSinkWithoutCheckpointsIsUnchanged(t *testing.T) {
	dir := t.TempDir()
	b := &Builtin{Root: dir}
	s := openTxSink(t, b, "r.jsonl", 0, 1)
	process(t, s, `{"a":1}`)
	if st, err := s.SnapshotState(1); err != nil || len(st.Committables)+len(st.Union) != 0 {
		t.Fatalf("snapshot %+v, %v", st, err)
	}
	if err := s.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"r.jsonl"}) || readText(t, filepath.Join(dir, "r.jsonl")) != "{\"a\":1}\n" {
		t.Fatalf("files %v", got)
	}
}
