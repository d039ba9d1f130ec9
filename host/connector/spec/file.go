package spec

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// FileSource is the file source: JSON lines or CSV from a file.
var FileSource = &Connector{
	Name:    "file",
	Role:    Source,
	Summary: "JSON lines or CSV from a file",
	Doc: "With parallelism p, subtask i reads the whole file and keeps the records i, i+p, i+2p, ... (in " +
		"line order). A line it cannot read goes the way of the operator's `on-error`. See [formats](#formats).",
	Options: []Option{
		pathOption("the file to read"),
		formatOption,
		nullLiteralOption("the cell text read as null"),
	},
	Boundedness: func(map[string]any) Boundedness { return Bounded },
	Check:       checkNullLiteral("source"),
	Replayable:  true,
	Guarantee:   ExactlyOnce,
}

// FileSink is the file sink: JSON lines or CSV into a file.
var FileSink = &Connector{
	Name:    "file",
	Role:    Sink,
	Summary: "JSON lines or CSV into a file",
	Doc: "The folder is created and the file truncated when the sink opens. At parallelism above 1 each " +
		"subtask writes its own file, named like Flink's part files by the 0-based subtask index before the " +
		"extension: `path: out.jsonl` at parallelism 3 writes `out-0.jsonl`, `out-1.jsonl` and `out-2.jsonl`. " +
		"A JSON line holds one compact value, keys in record order; a CSV file starts with a header row of " +
		"the first record's keys. See [formats](#formats).",
	Options: []Option{
		pathOption("the file to write"),
		formatOption,
		nullLiteralOption("the cell text null is written as"),
	},
	Check: checkNullLiteral("sink"),
	Example: `version: 1
name: to-files
parallelism: 3
operators:
  - id: readings
    source: { type: generator, preset: sensors, count: 300, seed: 4 }
  - id: out
    sink: { type: file, path: out/readings.csv, null-literal: "NULL" }
`,
	// with checkpoints, Flink's FileSink two-phase commit: part files
	// renamed to their final names when a checkpoint completes
	Guarantee: ExactlyOnce,
}

func pathOption(doc string) Option {
	return Option{Name: "path", Type: String, Required: true, Doc: doc + ", relative to the pipeline file's folder"}
}

var formatOption = Option{Name: "format", Type: Enum, Choices: []string{"json", "csv"},
	DefaultDoc: "`csv` for a path ending in `.csv` (any case), else `json`",
	Doc:        "`json`: one JSON value per line; `csv`: a header row naming the fields, then one record per row"}

func nullLiteralOption(doc string) Option {
	return Option{Name: "null-literal", Type: String, Empty: true, DefaultDoc: "none",
		Doc: doc + " (format `csv` only; Flink's `csv.null-literal`). Quote it: YAML reads a bare `NULL` as null"}
}

// checkNullLiteral refuses null-literal with a format other than csv.
func checkNullLiteral(role string) func(map[string]any) []Problem {
	return func(opts map[string]any) []Problem {
		if _, ok := opts["null-literal"]; !ok {
			return nil
		}
		format := FormatOf(opts)
		if format == "csv" {
			return nil
		}
		why := ""
		if _, ok := opts["format"]; !ok {
			if _, ok := opts["path"]; ok {
				why = " (its path does not end in .csv)"
			}
		}
		return []Problem{{Option: "null-literal", Msg: fmt.Sprintf("null-literal is an option of format csv, and this %s is format %s%s", role, format, why)}}
	}
}

// FormatOf is the format of a file or stdin connector with options
// opts: its format option, else csv for a path ending in .csv, else json.
func FormatOf(opts map[string]any) string {
	if f, ok := opts["format"].(string); ok {
		return f
	}
	if path, ok := opts["path"].(string); ok {
		return FileFormat(path)
	}
	return "json"
}

// FileFormat is a file connector's format when the pipeline names none:
// csv for a path ending in .csv (any case; a JSON reader on a CSV file
// failed at its first line, a sink wrote JSON lines into a .csv file),
// else json lines.
func FileFormat(path string) string {
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return "csv"
	}
	return "json"
}

// SubtaskFile is the file subtask writes for a file sink whose path is
// path, at parallelism above 1: "-<subtask>" (0-based, like Flink's part
// files) inserted before the extension of the base name, so out.jsonl
// becomes out-0.jsonl, out-1.jsonl, ... The connector names its files with
// it and lint compares them, so the two cannot disagree.
func SubtaskFile(path string, subtask int) string {
	ext := filepath.Ext(path)
	if base := filepath.Base(path); ext == base { // ".hidden"
		ext = ""
	}
	return strings.TrimSuffix(path, ext) + "-" + strconv.Itoa(subtask) + ext
}
