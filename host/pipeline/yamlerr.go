package pipeline

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// yamlLine is the form of the YAML library's syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns an error of the YAML library into an Error at the line
// of the problem.
//
// yaml.v3 says "yaml: line N: problem", but N is neither always the
// problem's line nor always 1-based. Its parser.fail takes the line of
// the problem's context when that is not the first line (where an unclosed
// { or quote opened, where a plain scalar broken by a stray tab on a later
// line began), else the problem's own; both marks count from 0, and it adds
// 1 for the scanner's problems only, so the parser's are one line early.
// With both marks on the first line it gives no line at all. The problem's
// own mark is not exported, so problemLine finds its line by parsing ever
// longer prefixes of the file: the shortest one that fails with the same
// error ends on the line where the parser gave up.
func yamlError(file string, data []byte, err error) *Error {
	var own *Error
	if errors.As(err, &own) { // ours, with its line
		return &Error{File: file, Pos: own.Pos, Msg: own.Msg}
	}
	msg := err.Error()
	from, problem := 1, strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		from, problem = n, m[2]
		if !scannerProblem(problem) {
			from = n + 1 // the parser's marks count from 0
		}
	}
	return &Error{File: file, Pos: Pos{problemLine(data, msg, from), 1}, Msg: "invalid YAML: " + problem}
}

// prefixBudget bounds the bytes problemLine parses again, so that a large
// hostile file cannot make an error report expensive; past it, the line
// the library named stands.
const prefixBudget = 512 << 10

// problemLine is the first line, from line from (1-based) on, such that
// data up to the end of that line fails to parse with the error msg; from
// when none does within the budget. The context of a problem comes before
// it, so the search never needs to start earlier than the context's line.
func problemLine(data []byte, msg string, from int) int {
	if from < 1 {
		from = 1
	}
	spent, line, end := 0, 1, 0
	for end < len(data) {
		next := bytes.IndexByte(data[end:], '\n')
		if next < 0 {
			end = len(data)
		} else {
			end += next + 1
		}
		if line >= from {
			if spent += end; spent > prefixBudget {
				return from
			}
			if _, _, err := firstDocument(data[:end]); err != nil && err.Error() == msg {
				return line
			}
		}
		line++
	}
	return from
}

// scannerProblem reports whether problem is one of the scanner's, whose
// line yaml.v3 reports 1-based (scannerc.go's yaml_parser_set_scanner_error
// calls); the parser's are reported 0-based.
func scannerProblem(problem string) bool {
	if strings.HasPrefix(problem, "exceeded max depth of ") {
		return true
	}
	switch problem {
	case "found character that cannot start any token",
		"could not find expected ':'",
		"block sequence entries are not allowed in this context",
		"mapping keys are not allowed in this context",
		"mapping values are not allowed in this context",
		"found unknown directive name",
		"did not find expected comment or line break",
		"could not find expected directive name",
		"found unexpected non-alphabetical character",
		"did not find expected digit or '.' character",
		"found extremely long version number",
		"did not find expected version number",
		"did not find expected whitespace",
		"did not find expected whitespace or line break",
		"did not find expected alphabetic or numeric character",
		"did not find the expected '>'",
		"found an indentation indicator equal to 0",
		"found a tab character where an indentation space is expected",
		"found unexpected document indicator",
		"found unexpected end of stream",
		"found unknown escape character",
		"did not find expected hexdecimal number",
		"found invalid Unicode character escape code",
		"found a tab character that violates indentation":
		return true
	}
	return false
}
