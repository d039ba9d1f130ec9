package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/runtime"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var jsonLines = []string{
	`{"z":1,"a":"x","m":{"k2":[1,2.5,null,true],"k1":"é ☃"}}`,
	`{"id":2,"neg":-9007199254740993,"f":0.25}`,
	`"a scalar"`,
	`{"id":3,"s":"quote \" and \\ and \n"}`,
}

func TestFileSourceJSONKeepsKeyOrder(t *testing.T) {
	dir := t.TempDir()
	// blank lines and CRLF endings are fine; the last line has no newline
	writeFile(t, dir, "in.jsonl", "\ufeff"+jsonLines[0]+"\r\n\n"+jsonLines[1]+"\n   \n"+jsonLines[2]+"\n"+jsonLines[3])
	b := &Builtin{Root: dir}
	spec := sourceSpec("read", "file", map[string]any{"path": "in.jsonl"})
	c, src := runSource(t, b, spec, 0, 1)
	got := c.jsons()
	if len(got) != len(jsonLines) {
		t.Fatalf("%d records: %q", len(got), got)
	}
	for i, want := range jsonLines {
		if got[i] != want {
			t.Errorf("record %d: %s, want %s", i, got[i], want)
		}
	}
	if src.Total() != 4 {
		t.Errorf("Total = %d, want 4", src.Total())
	}
	// parallelism 3: subtask i keeps records i, i+3, ...
	var union []string
	for i := 0; i < 3; i++ {
		c, src := runSource(t, b, spec, i, 3)
		if want := splitCount(4, i, 3); src.Total() != int64(want) || len(c.records) != int(want) {
			t.Errorf("subtask %d: %d records, Total %d, want %d", i, len(c.records), src.Total(), want)
		}
		union = append(union, c.jsons()...)
	}
	if strings.Join(union, "|") != strings.Join([]string{got[0], got[3], got[1], got[2]}, "|") {
		t.Errorf("p=3 records %q", union)
	}
}

func TestFileSourceLongLine(t *testing.T) {
	dir := t.TempDir()
	long := `{"s":"` + strings.Repeat("x", 200_000) + `"}`
	writeFile(t, dir, "in.jsonl", `{"a":1}`+"\n"+long+"\n"+`{"b":2}`+"\n")
	c, _ := runSource(t, &Builtin{Root: dir}, sourceSpec("read", "file", map[string]any{"path": "in.jsonl"}), 0, 1)
	if len(c.records) != 3 || c.records[1].json != long || c.records[2].json != `{"b":2}` {
		t.Fatalf("%d records", len(c.records))
	}
}

// TestFileSourceOverlongLineIsABadRecord: a line over the 16 MiB limit
// fails the job under fail, at its line, and under skip is skipped like
// any bad record: the lines after it are read (the job used to fail).
func TestFileSourceOverlongLineIsABadRecord(t *testing.T) {
	dir := t.TempDir()
	huge := `{"s":"` + strings.Repeat("x", maxLine+10) + `"}`
	writeFile(t, dir, "in.jsonl", `{"a":1}`+"\n"+huge+"\n"+`{"b":2}`+"\n")
	_, err := runSourceErr(t, &Builtin{Root: dir}, sourceSpec("read", "file", map[string]any{"path": "in.jsonl"}), 0, 1)
	wantErrContaining(t, err, "in.jsonl:2", "line longer than 16 MiB")
	spec := sourceSpec("read", "file", map[string]any{"path": "in.jsonl"})
	spec.OnError = "skip"
	c, _ := runSource(t, &Builtin{Root: dir}, spec, 0, 1)
	if len(c.records) != 2 || c.records[0].json != `{"a":1}` || c.records[1].json != `{"b":2}` {
		t.Fatalf("skip: %d records", len(c.records))
	}
}

func TestFileSourceMalformedJSON(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", "{\"a\":1}\n\n{\"a\":2}\n{\"a\": oops}\n{\"a\":4}\n")
	spec := sourceSpec("read", "file", map[string]any{"path": "in.jsonl"})
	c, err := runSourceErr(t, &Builtin{Root: dir}, spec, 0, 1)
	wantErrContaining(t, err, `source "read"`, path+":4:", "malformed JSON")
	var re *RecordError
	if !errors.As(err, &re) || re.Line != 4 || string(re.Raw) != `{"a": oops}` {
		t.Fatalf("error %#v, want a RecordError for line 4", err)
	}
	if got := strings.Join(c.jsons(), " "); got != `{"a":1} {"a":2}` {
		t.Errorf("records before the bad line: %s", got)
	}
	// The bad line is record 2: at parallelism 2 only subtask 0 meets it.
	if _, err := runSourceErr(t, &Builtin{Root: dir}, spec, 1, 2); err != nil {
		t.Errorf("subtask 1: %v", err)
	}
	if _, err := runSourceErr(t, &Builtin{Root: dir}, spec, 0, 2); err == nil {
		t.Errorf("subtask 0 read the bad line without error")
	}
	// on-error: skip
	spec.OnError = "skip"
	c, srcRun := runSource(t, &Builtin{Root: dir}, spec, 0, 1)
	if got := strings.Join(c.jsons(), " "); got != `{"a":1} {"a":2} {"a":4}` {
		t.Errorf("skip: %s", got)
	}
	if n := srcRun.(interface{ Skipped() int64 }).Skipped(); n != 1 {
		t.Errorf("Skipped = %d", n)
	}
	// a BadRecord hook decides
	var seen []*RecordError
	b := &Builtin{Root: dir, BadRecord: func(e *RecordError) error { seen = append(seen, e); return nil }}
	spec.OnError = ""
	c, _ = runSource(t, b, spec, 0, 1)
	if len(c.records) != 3 || len(seen) != 1 || seen[0].Operator != "read" || seen[0].Line != 4 {
		t.Errorf("hook saw %v, %d records", seen, len(c.records))
	}
}

const csvText = "name,qty,price,note\n" +
	"apple,3,1.25,fresh\n" +
	"\"pear, green\",-4,2e3,\"said \"\"hi\"\"\"\n" +
	"plum,007,0.5,\"two\nlines\"\n" +
	"fig,99999999999999999999,.5,\n" +
	"zip,01234,00.5,+4412345\n" +
	"zero,0,-0.25,-007\n" +
	"edge,-9223372036854775808,1e999,9223372036854775808\n"

func TestFileSourceCSV(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.csv", csvText)
	c, src := runSource(t, &Builtin{Root: dir}, sourceSpec("read", "file", map[string]any{"path": "in.csv", "format": "csv"}), 0, 1)
	want := []string{
		`{"name":"apple","qty":3,"price":1.25,"note":"fresh"}`,
		`{"name":"pear, green","qty":-4,"price":2000.0,"note":"said \"hi\""}`,
		`{"name":"plum","qty":"007","price":0.5,"note":"two\nlines"}`,       // 7 would lose the zeros
		`{"name":"fig","qty":"99999999999999999999","price":0.5,"note":""}`, // beyond int64: a float would round it
		`{"name":"zip","qty":"01234","price":"00.5","note":"+4412345"}`,
		`{"name":"zero","qty":0,"price":-0.25,"note":"-007"}`,
		`{"name":"edge","qty":-9223372036854775808,"price":"1e999","note":"9223372036854775808"}`,
	}
	got := c.jsons()
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("record %d: %v, want %s", i, got, want[i])
		}
	}
	if src.Total() != 7 {
		t.Errorf("Total = %d, want 7 (a quoted newline is not a record)", src.Total())
	}
}

func TestFileSourceCSVErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.csv", "a,b\n1,2\n3\n4,5\n")
	spec := sourceSpec("read", "file", map[string]any{"path": "in.csv", "format": "csv"})
	c, err := runSourceErr(t, &Builtin{Root: dir}, spec, 0, 1)
	wantErrContaining(t, err, `source "read"`, path+":3:", "wrong number of fields")
	if len(c.records) != 1 {
		t.Errorf("%d records before the bad row", len(c.records))
	}
	spec.OnError = "skip"
	if c, _ = runSource(t, &Builtin{Root: dir}, spec, 0, 1); strings.Join(c.jsons(), " ") != `{"a":1,"b":2} {"a":4,"b":5}` {
		t.Errorf("skip: %v", c.jsons())
	}
	// an unclosed quote is the fault of the line that opens it, found
	// where the input ends
	writeFile(t, dir, "open.csv", "a,b\n1,2\n\"3,4\n5,6\n")
	_, err = runSourceErr(t, &Builtin{Root: dir}, sourceSpec("read", "file", map[string]any{"path": "open.csv", "format": "csv"}), 0, 1)
	wantErrContaining(t, err, "open.csv:3:", "a quoted field that opens on this line is still open at line 4")
	writeFile(t, dir, "dup.csv", "a,a\n1,2\n")
	_, err = runSourceErr(t, &Builtin{Root: dir}, sourceSpec("read", "file", map[string]any{"path": "dup.csv", "format": "csv"}), 0, 1)
	wantErrContaining(t, err, "dup.csv:1:", `column "a" appears twice`)
}

func TestFileSourceMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := runSourceErr(t, &Builtin{Root: dir}, sourceSpec("read", "file", map[string]any{"path": "nope.jsonl"}), 0, 1)
	wantErrContaining(t, err, `source "read": cannot read `+filepath.Join(dir, "nope.jsonl"), "no such file")
	_, err = (&Builtin{}).Source(sourceSpec("read", "file", map[string]any{}), 0, 1)
	wantErrContaining(t, err, `option "path" is required`)
	_, err = (&Builtin{}).Source(sourceSpec("read", "file", map[string]any{"path": "x", "format": "xml"}), 0, 1)
	wantErrContaining(t, err, `option "format" must be one of json, csv, got "xml"`)
}

// TestFileSourceRefusesPipes: a named pipe without a writer blocked the
// open for good (no signal reached it); a file source wants a regular file.
func TestFileSourceRefusesPipes(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := runSourceErr(t, &Builtin{Root: dir}, sourceSpec("read", "file", map[string]any{"path": "fifo.jsonl"}), 0, 1)
		done <- err
	}()
	select {
	case err := <-done:
		wantErrContaining(t, err, `source "read": `+filepath.Join(dir, "fifo.jsonl")+` is not a regular file (a named pipe)`, "through a stdin source")
	case <-time.After(10 * time.Second):
		t.Fatal("the open of a named pipe blocked")
	}
}

func TestStdinSource(t *testing.T) {
	b := &Builtin{Stdin: strings.NewReader("{\"b\":1,\"a\":2}\nnot json\n")}
	spec := sourceSpec("in", "stdin", nil)
	c, err := runSourceErr(t, b, spec, 0, 1)
	wantErrContaining(t, err, `source "in": stdin:2: malformed JSON`)
	if strings.Join(c.jsons(), " ") != `{"b":1,"a":2}` {
		t.Errorf("records %v", c.jsons())
	}
	b = &Builtin{Stdin: strings.NewReader("x,y\n1,a\n")}
	c, src := runSource(t, b, sourceSpec("in", "stdin", map[string]any{"format": "csv"}), 0, 1)
	if strings.Join(c.jsons(), " ") != `{"x":1,"y":"a"}` || src.Total() != -1 {
		t.Errorf("csv records %v, Total %d", c.jsons(), src.Total())
	}
	_, err = b.Source(sourceSpec("in", "stdin", nil), 0, 2)
	wantErrContaining(t, err, `source "in" (stdin): parallelism must be 1`)
	_, err = b.Source(sourceSpec("other", "stdin", nil), 0, 1)
	wantErrContaining(t, err, `source "other": stdin is already read by source "in"`)
}

// A read from a terminal blocks; cancelling the job still ends Run.
func TestStdinSourceCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	src, err := (&Builtin{Stdin: pr}).Source(sourceSpec("in", "stdin", nil), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{t: t}
	done := make(chan error)
	go func() { done <- src.Run(ctx, c) }()
	if _, err := pw.Write([]byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

var _ runtime.Source = (*fileSource)(nil)

// TestFileSourceOutsideTheRootsSaysNothingOfWhatItIs: a device outside the
// data roots is refused as outside, not described (the kind check ran
// before the confinement check and told "a character device").
func TestFileSourceOutsideTheRootsSaysNothingOfWhatItIs(t *testing.T) {
	dir := t.TempDir()
	_, err := runSourceErr(t, &Builtin{Root: dir, Roots: []string{dir}}, sourceSpec("read", "file", map[string]any{"path": "/dev/zero"}), 0, 1)
	if err == nil || strings.Contains(err.Error(), "device") || !strings.Contains(err.Error(), "outside the allowed root") {
		t.Fatalf("err = %v", err)
	}
}

// TestStdinSourceLiveInput: records piped in one at a time (tail -f) go
// downstream as they come, not when 512 of them are held or at end of
// input; bulk input still fills batches.
func TestStdinSourceLiveInput(t *testing.T) {
	for _, tc := range []struct{ format, head, line, want string }{
		{"json", "", "{\"i\":%d}\n", `{"i":%d}`},
		{"csv", "i\n", "%d\n", `{"i":%d}`},
	} {
		t.Run(tc.format, func(t *testing.T) {
			pr, pw := io.Pipe()
			src, err := (&Builtin{Stdin: pr}).Source(sourceSpec("in", "stdin", map[string]any{"format": tc.format}), 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan []string, 10)
			c := &collector{t: t, onEmit: func(c *collector) { got <- c.jsons() }}
			done := make(chan error, 1)
			go func() { done <- src.Run(context.Background(), c) }()
			if tc.head != "" {
				if _, err := io.WriteString(pw, tc.head); err != nil {
					t.Fatal(err)
				}
			}
			for i := 1; i <= 3; i++ {
				if _, err := fmt.Fprintf(pw, tc.line, i); err != nil {
					t.Fatal(err)
				}
				select {
				case recs := <-got:
					if want := fmt.Sprintf(tc.want, i); len(recs) != i || recs[i-1] != want {
						t.Fatalf("after line %d: records %q, want the last to be %s", i, recs, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("record %d did not reach the collector while the input stayed open", i)
				}
			}
			pw.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
	// bulk input written at once still goes in full batches
	var in strings.Builder
	for i := 0; i < 5*maxBatchRecords; i++ {
		fmt.Fprintf(&in, "{\"i\":%d}\n", i)
	}
	c, _ := runSource(t, &Builtin{Stdin: strings.NewReader(in.String())}, sourceSpec("in", "stdin", nil), 0, 1)
	if len(c.records) != 5*maxBatchRecords || c.batches > 7 {
		t.Errorf("bulk input: %d records in %d batches", len(c.records), c.batches)
	}
}

// TestLineReaderCancelHandsOnWhatItRead: a source cancelled while it holds
// a partial batch emits it before it returns (it dropped it).
func TestLineReaderCancelHandsOnWhatItRead(t *testing.T) {
	for _, isCSV := range []bool{false, true} {
		pr, pw := io.Pipe()
		l := &lineReader{op: "in", input: "stdin", csv: isCSV, parallelism: 1}
		ctx, cancel := context.WithCancel(context.Background())
		stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
		c := &collector{t: t}
		done := make(chan error, 1)
		go func() { done <- l.run(ctx, pr, c) }()
		text := "{\"a\":1}\n{\"a\":2}\n"
		if isCSV {
			text = "a\n1\n2\n"
		}
		if _, err := io.WriteString(pw, text); err != nil {
			t.Fatal(err)
		}
		cancel()
		err := <-done
		stop()
		if err == nil { // the closed pipe's error: stdinSource.Run returns ctx.Err()
			t.Errorf("csv %v: run = nil after cancel", isCSV)
		}
		if got := strings.Join(c.jsons(), " "); got != `{"a":1} {"a":2}` {
			t.Errorf("csv %v: records emitted on cancel: %q", isCSV, got)
		}
	}
}

// TestCSVBadRecordKeepsItsText: a bad CSV record's RecordError (and so its
// dead letter) holds the record's text as read, without its line ending,
// wherever it is in the input and at any parallelism (Raw was nil).
func TestCSVBadRecordKeepsItsText(t *testing.T) {
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("id,name\r\n")
	for i := 0; i < 20000; i++ { // past what the reader's buffer holds
		fmt.Fprintf(&in, "%d,name %d\r\n", i, i)
	}
	in.WriteString("\r\n\nbad,row,3\r\n")         // line 20002, after two blank lines
	in.WriteString("x,\"two\nlines\",more\n")     // line 20005, spans two lines
	in.WriteString("y,\"open\n\n  to the end,\n") // line 20007: a quote left open
	writeFile(t, dir, "in.csv", in.String())
	spec := sourceSpec("read", "file", map[string]any{"path": "in.csv"})
	for _, par := range []int{1, 3} {
		var seen []string
		b := &Builtin{Root: dir, BadRecord: func(e *RecordError) error {
			seen = append(seen, fmt.Sprintf("%d %q", e.Line, e.Raw))
			return nil
		}}
		var n int
		for st := 0; st < par; st++ {
			c, _ := runSource(t, b, spec, st, par)
			n += len(c.records)
		}
		slices.Sort(seen)
		want := []string{`20004 "bad,row,3"`, `20005 "x,\"two\nlines\",more"`, `20007 "y,\"open\n\n  to the end,"`}
		if n != 20000 || !slices.Equal(seen, want) {
			t.Errorf("parallelism %d: %d records, bad records %q, want %q", par, n, seen, want)
		}
	}
}

// TestSourceRefusesInvalidUTF8: a JSON line or CSV row that is not UTF-8
// is a bad record under the on-error policy (JSON made each bad byte
// U+FFFD, CSV kept it in a string); the record keeps the bytes.
func TestSourceRefusesInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ format, in, err, raw, good string }{
		{"json", "{\"a\":1}\n{\"a\":\"\xff\xfe\"}\n{\"a\":3}\n", "stdin:2: malformed JSON: json: invalid UTF-8 at byte 7", "{\"a\":\"\xff\xfe\"}", `{"a":1} {"a":3}`},
		{"csv", "a,b\n1,x\n2,caf\xe9\r\n3,y\n", "stdin:3: invalid UTF-8 at byte 6", "2,caf\xe9", `{"a":1,"b":"x"} {"a":3,"b":"y"}`},
	} {
		spec := sourceSpec("in", "stdin", map[string]any{"format": tc.format})
		_, err := runSourceErr(t, &Builtin{Stdin: strings.NewReader(tc.in)}, spec, 0, 1)
		wantErrContaining(t, err, `source "in": `+tc.err)
		var seen []*RecordError
		b := &Builtin{Stdin: strings.NewReader(tc.in), BadRecord: func(e *RecordError) error { seen = append(seen, e); return nil }}
		c, _ := runSource(t, b, spec, 0, 1)
		if got := strings.Join(c.jsons(), " "); got != tc.good || len(seen) != 1 || string(seen[0].Raw) != tc.raw {
			t.Errorf("%s: records %s, bad records %v", tc.format, got, seen)
		}
	}
	// a CSV header that is not UTF-8 fails the source, as its other faults do
	_, err := runSourceErr(t, &Builtin{Stdin: strings.NewReader("a,\xff\n1,2\n")}, sourceSpec("in", "stdin", map[string]any{"format": "csv"}), 0, 1)
	wantErrContaining(t, err, `source "in": stdin:1: invalid UTF-8 at byte 3 of the header`)
}

// TestSourceRefusesDuplicateFields: a JSON line whose object names a field
// twice is a malformed line under on-error (it was read with both).
func TestSourceRefusesDuplicateFields(t *testing.T) {
	in := "{\"k\":\"a\",\"v\":1}\n{\"k\":\"a\",\"v\":1,\"k\":\"b\"}\n{\"k\":\"c\",\"m\":{\"v\":1,\"v\":2}}\n{\"k\":\"d\"}\n"
	_, err := runSourceErr(t, &Builtin{Stdin: strings.NewReader(in)}, sourceSpec("in", "stdin", nil), 0, 1)
	wantErrContaining(t, err, `source "in": stdin:2: malformed JSON: json: duplicate field "k"`)
	var seen []string
	b := &Builtin{Stdin: strings.NewReader(in), BadRecord: func(e *RecordError) error {
		seen = append(seen, fmt.Sprintf("%d %s", e.Line, e.Raw))
		return nil
	}}
	c, _ := runSource(t, b, sourceSpec("in", "stdin", nil), 0, 1)
	if got := strings.Join(c.jsons(), " "); got != `{"k":"a","v":1} {"k":"d"}` || len(seen) != 2 || seen[1] != `3 {"k":"c","m":{"v":1,"v":2}}` {
		t.Errorf("records %s, bad records %q", got, seen)
	}
}
