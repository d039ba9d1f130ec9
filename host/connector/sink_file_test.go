package connector

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/connector/spec"
)

// roundTrip reads path with a file source and writes what it read with a
// file sink to out, returning out's text.
// roundTrip reads in and writes it to out, both in format ("": the
// format the paths' extensions give).
func roundTrip(t *testing.T, dir, in, out, format string) string {
	t.Helper()
	b := &Builtin{Root: dir}
	opts := func(path string) map[string]any {
		if format == "" {
			return map[string]any{"path": path}
		}
		return map[string]any{"path": path, "format": format}
	}
	c, _ := runSource(t, b, sourceSpec("read", "file", opts(in)), 0, 1)
	s := openSink(t, b, "write", "file", opts(out), 0, 1)
	var w abi.Writer
	for _, r := range c.records {
		w.Append(r.time, r.hasTime, r.key, r.value)
	}
	if err := s.Process(0, w.Buf, w.Count, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func TestFileSinkJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	text := strings.Join(jsonLines, "\n") + "\n"
	writeFile(t, dir, "in.jsonl", text)
	if got := roundTrip(t, dir, "in.jsonl", "out/deep/out.jsonl", "json"); got != text {
		t.Errorf("round trip:\n%s\nwant:\n%s", got, text)
	}
}

func TestFileSinkCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	text := "name,qty,price,note\n" +
		"apple,3,1.25,fresh\n" +
		"\"pear, green\",-4,2000.0,\"said \"\"hi\"\"\"\n" +
		"plum,7,0.5,\"two\nlines\"\n" +
		"fig,0,-0.001,\n" +
		"\" lead\",1,1e-07,x\n"
	writeFile(t, dir, "in.csv", text)
	if got := roundTrip(t, dir, "in.csv", "out.csv", "csv"); got != text {
		t.Errorf("round trip:\n%s\nwant:\n%s", got, text)
	}
	// with no format, a .csv path is CSV (any case), others JSON lines
	writeFile(t, dir, "in.CSV", text)
	if got := roundTrip(t, dir, "in.CSV", "out2.csv", ""); got != text {
		t.Errorf("round trip without a format:\n%s\nwant:\n%s", got, text)
	}
	if got := roundTrip(t, dir, "in.csv", "out.jsonl", ""); !strings.HasPrefix(got, `{"name":"apple","qty":3,"price":1.25,"note":"fresh"}`+"\n") {
		t.Errorf("a .csv read into a .jsonl sink: %q", got)
	}
}

func TestFileSinkCSVColumns(t *testing.T) {
	dir := t.TempDir()
	s := openSink(t, &Builtin{Root: dir}, "out", "file", map[string]any{"path": "o.csv", "format": "csv"}, 0, 1)
	batch, n := batchOf(t, `{"id":1,"tags":["a","b"],"ok":true,"none":null}`, `{"ok":false,"id":2}`)
	if err := s.Process(0, batch, n, nil); err != nil {
		t.Fatal(err)
	}
	batch, n = batchOf(t, `{"id":3}`, `{"id":4,"extra":1}`)
	err := s.Process(0, batch, n, nil)
	wantErrContaining(t, err, `sink "out": record 4: field "extra" is not a column of the CSV header`)
	batch, n = batchOf(t, `[1,2]`)
	err = s.Process(0, batch, n, nil)
	wantErrContaining(t, err, `sink "out": record 4: CSV needs records that are maps, got array`)
	if err := s.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "o.csv"))
	want := "id,tags,ok,none\n1,\"[\"\"a\"\",\"\"b\"\"]\",true,\n2,,false,\n3,,,\n"
	if string(got) != want {
		t.Errorf("csv:\n%q\nwant\n%q", got, want)
	}
}

func TestFileSinkOneFilePerSubtask(t *testing.T) {
	dir := t.TempDir()
	for sub := 0; sub < 3; sub++ {
		s := openSink(t, &Builtin{Root: dir}, "out", "file", map[string]any{"path": "res/out.jsonl"}, sub, 3)
		batch, n := batchOf(t, `{"sub":`+string(rune('0'+sub))+`}`)
		if err := s.Process(0, batch, n, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(&collector{t: t}); err != nil {
			t.Fatal(err)
		}
	}
	for sub := 0; sub < 3; sub++ {
		got, err := os.ReadFile(filepath.Join(dir, "res", "out-"+string(rune('0'+sub))+".jsonl"))
		if err != nil || string(got) != `{"sub":`+string(rune('0'+sub))+"}\n" {
			t.Errorf("subtask %d file: %q %v", sub, got, err)
		}
	}
	for in, want := range map[string]string{
		"out.jsonl": "out-2.jsonl", "a/b.c/out": "a/b.c/out-2", "d/.hidden": "d/.hidden-2", "x.tar.gz": "x.tar-2.gz",
	} {
		if got := spec.SubtaskFile(in, 2); got != want {
			t.Errorf("SubtaskFile(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFileSinkUnwritablePath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "afile", "x")
	for _, b := range []*Builtin{{Root: dir}, {Root: dir, Roots: []string{dir}}} { // unconfined, confined
		for path, why := range map[string]string{
			"afile/out.jsonl":   filepath.Join(dir, "afile") + " is a file, not a folder",
			"afile/x/out.jsonl": filepath.Join(dir, "afile") + " is a file, not a folder",
			".":                 "is a directory",
		} {
			s, err := b.Sink(sinkSpec("out", "file", map[string]any{"path": path}), 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Open(nil)
			wantErrContaining(t, err, `sink "out": cannot write `+filepath.Join(dir, path), why)
			if err := s.Close(nil); err != nil {
				t.Errorf("Close after a failed Open: %v", err)
			}
		}
	}
	_, err := (&Builtin{}).Sink(sinkSpec("out", "file", map[string]any{"format": "csv"}), 0, 1)
	wantErrContaining(t, err, `sink "out" (file): option "path" is required`)
}

// TestFileSinkNonFiniteFloats: a NaN or infinite float is written as Java
// writes it, NaN, Infinity and -Infinity: bare in CSV (Double.toString),
// quoted in JSON lines (Jackson); it was "+Inf", and """+Inf""" in CSV.
func TestFileSinkNonFiniteFloats(t *testing.T) {
	dir := t.TempDir()
	var w abi.Writer
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 2.5} {
		v := abi.AppendMapHeader(appendNoTimeNoKey(w.Buf), 2)
		v = abi.AppendStr(v, "k")
		v = abi.AppendStr(v, "a")
		w.Buf = abi.AppendFloat(abi.AppendStr(v, "v"), f)
		w.Count++
	}
	for _, tc := range []struct{ path, want string }{
		{"o.csv", "k,v\na,Infinity\na,-Infinity\na,NaN\na,2.5\n"},
		{"o.jsonl", `{"k":"a","v":"Infinity"}` + "\n" + `{"k":"a","v":"-Infinity"}` + "\n" + `{"k":"a","v":"NaN"}` + "\n" + `{"k":"a","v":2.5}` + "\n"},
	} {
		s := openSink(t, &Builtin{Root: dir}, "out", "file", map[string]any{"path": tc.path}, 0, 1)
		if err := s.Process(0, w.Buf, w.Count, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(&collector{t: t}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, tc.path)); string(got) != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.path, got, tc.want)
		}
	}
}

// TestCSVNullLiteral: without null-literal a CSV sink writes null and a
// missing field as an empty cell and a source reads an empty cell as "";
// with it (Flink's csv.null-literal) null and "" survive a round trip as
// themselves, a missing field writes the literal, and a quoted literal is
// still null (CSV cannot tell them apart).
func TestCSVNullLiteral(t *testing.T) {
	dir := t.TempDir()
	records := []string{`{"id":1,"note":null,"tag":""}`, `{"id":2,"tag":"x"}`, `{"id":3,"note":"NULL, really","tag":"NULL"}`}
	write := func(name string, opts map[string]any) string {
		t.Helper()
		opts["path"] = name
		s := openSink(t, &Builtin{Root: dir}, "out", "file", opts, 0, 1)
		batch, n := batchOf(t, records...)
		if err := s.Process(0, batch, n, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(&collector{t: t}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	read := func(name string, opts map[string]any) []string {
		t.Helper()
		opts["path"] = name
		c, _ := runSource(t, &Builtin{Root: dir}, sourceSpec("in", "file", opts), 0, 1)
		return c.jsons()
	}
	if got, want := write("plain.csv", map[string]any{}), "id,note,tag\n1,,\n2,,x\n3,\"NULL, really\",NULL\n"; got != want {
		t.Errorf("no null-literal:\n%q\nwant\n%q", got, want)
	}
	if got, want := strings.Join(read("plain.csv", map[string]any{}), "\n"),
		`{"id":1,"note":"","tag":""}`+"\n"+`{"id":2,"note":"","tag":"x"}`+"\n"+`{"id":3,"note":"NULL, really","tag":"NULL"}`; got != want {
		t.Errorf("read without null-literal:\n%s\nwant\n%s", got, want)
	}
	if got, want := write("null.csv", map[string]any{"null-literal": "NULL"}), "id,note,tag\n1,NULL,\n2,NULL,x\n3,\"NULL, really\",NULL\n"; got != want {
		t.Errorf("null-literal NULL:\n%q\nwant\n%q", got, want)
	}
	if got, want := strings.Join(read("null.csv", map[string]any{"null-literal": "NULL"}), "\n"),
		`{"id":1,"note":null,"tag":""}`+"\n"+`{"id":2,"note":null,"tag":"x"}`+"\n"+`{"id":3,"note":"NULL, really","tag":null}`; got != want {
		t.Errorf("read with null-literal NULL:\n%s\nwant\n%s", got, want)
	}
	// an empty literal: empty cells are null
	if got, want := strings.Join(read("plain.csv", map[string]any{"null-literal": ""}), "\n"),
		`{"id":1,"note":null,"tag":null}`+"\n"+`{"id":2,"note":null,"tag":"x"}`+"\n"+`{"id":3,"note":"NULL, really","tag":"NULL"}`; got != want {
		t.Errorf("read with null-literal \"\":\n%s\nwant\n%s", got, want)
	}
	// a literal that needs quotes is written quoted and read back as null
	if got, want := write("comma.csv", map[string]any{"null-literal": "n,a"}), "id,note,tag\n1,\"n,a\",\n2,\"n,a\",x\n3,\"NULL, really\",NULL\n"; got != want {
		t.Errorf("null-literal n,a:\n%q\nwant\n%q", got, want)
	}
	if got := read("comma.csv", map[string]any{"null-literal": "n,a"}); got[1] != `{"id":2,"note":null,"tag":"x"}` {
		t.Errorf("read with null-literal n,a: %v", got)
	}
	// a JSON lines file has null of its own
	_, err := (&Builtin{Root: dir}).Source(sourceSpec("in", "file", map[string]any{"path": "a.jsonl", "null-literal": "NULL"}), 0, 1)
	wantErrContaining(t, err, `"null-literal" is an option of format csv, and this is format json`)
	_, err = (&Builtin{Root: dir}).Sink(sinkSpec("out", "file", map[string]any{"path": "a.csv", "format": "json", "null-literal": "NULL"}), 0, 1)
	wantErrContaining(t, err, `"null-literal" is an option of format csv, and this is format json`)
}

// TestCSVOneColumnEmptyCell: a row of one empty cell is written "" (a
// blank line is no record to a CSV reader) and reads back as a record.
func TestCSVOneColumnEmptyCell(t *testing.T) {
	dir := t.TempDir()
	s := openSink(t, &Builtin{Root: dir}, "out", "file", map[string]any{"path": "one.csv"}, 0, 1)
	batch, n := batchOf(t, `{"w":"a"}`, `{"w":""}`, `{"w":null}`, `{"w":"b"}`)
	if err := s.Process(0, batch, n, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "one.csv"))
	if want := "w\na\n\"\"\n\"\"\nb\n"; string(b) != want {
		t.Errorf("one column:\n%q\nwant\n%q", b, want)
	}
	c, _ := runSource(t, &Builtin{Root: dir}, sourceSpec("in", "file", map[string]any{"path": "one.csv"}), 0, 1)
	if got := strings.Join(c.jsons(), " "); got != `{"w":"a"} {"w":""} {"w":""} {"w":"b"}` {
		t.Errorf("read back: %s", got)
	}
	// a column named "": its header too is written "" (a blank header
	// line made the first row the header, and lost it)
	s = openSink(t, &Builtin{Root: dir}, "out", "file", map[string]any{"path": "blank.csv"}, 0, 1)
	batch, n = batchOf(t, `{"":"a"}`, `{"":"b"}`)
	if err := s.Process(0, batch, n, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	c, _ = runSource(t, &Builtin{Root: dir}, sourceSpec("in", "file", map[string]any{"path": "blank.csv"}), 0, 1)
	if got := strings.Join(c.jsons(), " "); got != `{"":"a"} {"":"b"}` {
		t.Errorf("a column named \"\" read back: %s", got)
	}
	// a first record with no fields names no columns: refused
	s = openSink(t, &Builtin{Root: dir}, "out", "file", map[string]any{"path": "none.csv"}, 0, 1)
	batch, n = batchOf(t, `{}`, `{}`)
	wantErrContaining(t, s.Process(0, batch, n, nil), `sink "out": record 1: CSV needs a first record with fields`)
}
