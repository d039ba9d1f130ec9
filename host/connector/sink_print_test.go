package connector

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

func openSink(t *testing.T, b *Builtin, id, typ string, opts map[string]any, subtask, parallelism int) runtime.Operator {
	t.Helper()
	s, err := b.Sink(sinkSpec(id, typ, opts), subtask, parallelism)
	if err != nil {
		t.Fatalf("Sink: %v", err)
	}
	if err := s.Open(&runtime.OpenContext{Operator: id, Subtask: subtask, Parallelism: parallelism}); err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// Flink's PrintSinkOutputWriter prefixes, all four cases.
func TestPrintSinkPrefixes(t *testing.T) {
	tests := []struct {
		prefix     string
		subtask, p int
		want       string
	}{
		{"out", 2, 4, "out:3> "},
		{"out", 0, 1, "out> "},
		{"", 1, 2, "2> "},
		{"", 0, 1, ""},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		b := &Builtin{Stdout: &buf}
		opts := map[string]any{"prefix": tt.prefix} // "" as Flink's print(""): none
		s := openSink(t, b, "p", "print", opts, tt.subtask, tt.p)
		batch, n := batchOf(t, `{"b":1,"a":[true,null]}`, `"x"`)
		if err := s.Process(0, batch, n, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(nil); err != nil {
			t.Fatal(err)
		}
		want := tt.want + `{"b":1,"a":[true,null]}` + "\n" + tt.want + `"x"` + "\n"
		if buf.String() != want {
			t.Errorf("prefix %q subtask %d of %d: %q, want %q", tt.prefix, tt.subtask, tt.p, buf.String(), want)
		}
	}
}

// writeRecorder records every Write call.
type writeRecorder struct {
	mu     sync.Mutex
	writes [][]byte
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, append([]byte(nil), p...))
	return len(p), nil
}

// Subtasks printing at once never split a line: every write holds whole
// lines, and every record arrives once.
func TestPrintSinkSubtasksWriteWholeLines(t *testing.T) {
	w := &writeRecorder{}
	b := &Builtin{Stdout: w}
	const p, batches, per = 4, 30, 700 // 700 records of ~110 bytes pass 64 KiB
	var wg sync.WaitGroup
	for sub := 0; sub < p; sub++ {
		s := openSink(t, b, "p", "print", map[string]any{"prefix": "t"}, sub, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < batches; i++ {
				var vals []string
				for j := 0; j < per; j++ {
					vals = append(vals, fmt.Sprintf(`{"sub":%d,"i":%d,"pad":"%s"}`, sub, i*per+j, strings.Repeat("p", 80)))
				}
				batch, n := batchOf(t, vals...)
				if err := s.Process(0, batch, n, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, wr := range w.writes {
		if len(wr) == 0 || wr[len(wr)-1] != '\n' {
			t.Fatalf("a write ends mid-line: %q", wr[max(0, len(wr)-40):])
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(wr), "\n"), "\n") {
			var sub, i int
			if _, err := fmt.Sscanf(line, `t:%d> {"sub":%d,"i":%d,`, new(int), &sub, &i); err != nil {
				t.Fatalf("bad line %q: %v", line, err)
			}
			if !strings.HasPrefix(line, fmt.Sprintf("t:%d> ", sub+1)) {
				t.Fatalf("line %q has another subtask's prefix", line)
			}
			seen[line[:20]+fmt.Sprint(sub, i)] = true
		}
	}
	if len(seen) != p*batches*per {
		t.Errorf("%d distinct lines, want %d", len(seen), p*batches*per)
	}
	if len(w.writes) < p*batches*2 {
		t.Errorf("%d writes: batches over 64 KiB should be written in parts", len(w.writes))
	}
}

func TestPrintSinkBadRecordKeepsEarlierLines(t *testing.T) {
	var buf bytes.Buffer
	s := openSink(t, &Builtin{Stdout: &buf}, "p", "print", nil, 0, 1)
	batch, n := batchOf(t, `{"a":1}`, `{"a":2}`)
	var w abi.Writer
	w.AppendRaw(batch)
	w.Append(0, false, nil, []byte{0xc1}) // never-used msgpack byte
	if err := s.Process(0, w.Buf, n+1, nil); err == nil {
		t.Fatal("no error for a bad record")
	} else {
		wantErrContaining(t, err, `sink "p"`, "record 3")
	}
	if buf.String() != "{\"a\":1}\n{\"a\":2}\n" {
		t.Errorf("output %q", buf.String())
	}
	_, err := (&Builtin{}).Sink(sinkSpec("p", "print", map[string]any{"prefx": "x"}), 0, 1)
	wantErrContaining(t, err, `sink "p" (print): unknown option "prefx" (known: prefix)`)
}

func TestDiscardSink(t *testing.T) {
	s := openSink(t, &Builtin{}, "d", "discard", nil, 0, 1)
	batch, n := batchOf(t, `{"a":1}`, `{"a":2}`, `3`)
	for i := 0; i < 3; i++ {
		if err := s.Process(0, batch, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(nil); err != nil {
		t.Fatal(err)
	}
	d := s.(interface{ Records() int64 })
	if d.Records() != 9 {
		t.Errorf("Records = %d, want 9", d.Records())
	}
}
