package spec

// FormatsDoc is how the file and stdin connectors read and write their
// two formats, in Markdown: a section of docs/connectors.md.
const FormatsDoc = "**JSON lines** (`format: json`): one JSON value per line, blank lines skipped; a sink writes " +
	"each record's value as one compact line, keys in record order. An integer past int64 up to 2^64-1 " +
	"stays an unsigned integer; one past 64 bits is refused rather than kept as a float with lost digits.\n\n" +
	"**CSV** (`format: csv`): a header row names the fields; a sink writes it from the first record's keys. " +
	"A later record may give its fields in any order or leave some out (empty cells), but a field that is not " +
	"in the sink's header is an error: dropping it would lose data. A path ending in `.csv` (any case) is CSV " +
	"without `format`. CSV fields are typed by their text: `-?digits` that fits an int64 is an int, a decimal " +
	"number with a fraction or exponent (`1.25`, `.5`, `2e3`) a float, anything else a string — and so is a " +
	"number whose text the number would not keep: a leading zero before a digit (`007`, `01234`, `00.5`; " +
	"`0` and `0.5` are numbers), a leading `+` (`+4412345`), an integer beyond int64 " +
	"(`12345678901234567890`) and a float out of range (`1e999`). Such a field is an identifier, not a " +
	"quantity; a map plugin can convert it when it is a number after all. A sink writes a string as it is, " +
	"a NaN or infinite float as Java does (`NaN`, `Infinity`, `-Infinity`) and anything else as its JSON " +
	"text, so numbers read back with their type.\n\n" +
	"**Null in CSV.** CSV has no null of its own: by default a CSV sink writes null (and a field the record " +
	"lacks) as an empty cell, and a CSV source reads an empty cell as `\"\"`. As with Flink's " +
	"`csv.null-literal`, a CSV file source, stdin or file sink takes `null-literal: \"NULL\"` (quoted: YAML " +
	"reads a bare `NULL` as null): cells with that text read as null and nulls write as it; a string with " +
	"the same text reads back as null too. `null-literal` with format `json` is refused.\n\n" +
	"**Bad lines.** A line a file or stdin source cannot read (not JSON, CSV that does not parse) goes the " +
	"way of the operator's `on-error` ([sandboxing.md](sandboxing.md#when-a-record-fails)): `fail` (the " +
	"default) stops the job naming the file and line, `skip` drops it, `dead-letter` sends it to the side " +
	"output `<id>.dead-letter` with what was wrong."
