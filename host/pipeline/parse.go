package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/host/connector/spec"
)

// ParseOptions tunes Parse. The zero value is usable: no variables, the
// default size limit, plugin paths confined to the pipeline's folder.
type ParseOptions struct {
	// Lookup gives the value of a ${VAR}; nil knows no variable. The CLI
	// passes os.LookupEnv; tests pass a map, so they stay hermetic.
	Lookup func(name string) (string, bool)
	// MaxBytes is the largest file accepted; 0 means DefaultMaxBytes.
	MaxBytes int
	// AllowAbsolutePaths lets plugin paths be absolute or climb out of
	// the allowed folders with "..".
	AllowAbsolutePaths bool
	// PluginRoots are folders, besides the pipeline file's own, that a
	// relative plugin path may reach with ".." segments (the CLI passes
	// the working directory, so configs/x.yaml may name
	// ../plugins/p/p.wasm when run from the project).
	PluginRoots []string
	// Partial, when the file has problems, returns with them the
	// pipeline as far as it decoded (what was wrong left out), for
	// checks that need no plan (lint's file paths); else the pipeline is
	// nil then.
	Partial bool
	// Connectors is the set of sources and sinks the pipeline may use;
	// nil means spec.Builtin, the built-in ones. host/server passes the
	// built-in set with its collect sink.
	Connectors *spec.Set
}

// ParseFile reads and parses the pipeline file at path, refusing files
// larger than the limit before reading them.
func ParseFile(path string, opts ParseOptions) (*Pipeline, error) {
	limit := opts.maxBytes()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read pipeline %s: %w", path, err)
	}
	return Parse(path, data, opts)
}

func (o ParseOptions) maxBytes() int {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

// Parse parses and lints a pipeline written in YAML. file names it in
// errors and anchors relative plugin paths. Every problem found is
// returned at once as Errors, sorted by position; the pipeline is nil
// then, unless opts.Partial.
func Parse(file string, data []byte, opts ParseOptions) (*Pipeline, error) {
	var errs Errors
	if len(data) > opts.maxBytes() {
		errs.errorf(file, Pos{}, "file is larger than %d bytes: refusing it", opts.maxBytes())
		return nil, errs
	}
	root, err := parseYAML(data)
	if err != nil {
		errs = append(errs, yamlError(file, data, err))
		return nil, errs
	}
	if root == nil || len(root.Content) == 0 {
		errs.errorf(file, Pos{1, 1}, "empty pipeline: it needs at least version, name and operators")
		return nil, errs
	}
	failed, ok := prepareTree(file, root, opts.Lookup, &errs)
	if !ok {
		return nil, errs.Err()
	}
	d := &decoder{file: file, errs: errs, quiet: failed, skipShape: map[*Operator]bool{}, set: opts.connectors()}
	p := d.pipeline(root.Content[0])
	if p != nil {
		p.File = file
		d.validate(p)
		d.checkPluginPaths(p, opts)
	}
	if err := d.errs.Err(); err != nil {
		if opts.Partial && p != nil {
			return p, err
		}
		return nil, err
	}
	return p, nil
}

// parseYAML parses exactly one YAML document into a node tree. A second
// document is reported as an *Error at its line.
func parseYAML(data []byte) (root *yaml.Node, err error) {
	doc, dec, err := firstDocument(data)
	if err != nil || doc == nil {
		return nil, err
	}
	var extra yaml.Node
	if err := decode(dec, &extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, &Error{Pos: Pos{extra.Line, 1}, Msg: "invalid YAML: a pipeline file holds one document; this is a second one"}
	}
	return doc, nil
}

// firstDocument decodes the first document of data: nil without one.
func firstDocument(data []byte) (*yaml.Node, *yaml.Decoder, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := decode(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return &doc, dec, nil
}

// decode is dec.Decode(n), with a panic turned into an error: yaml
// promises not to panic on bad input; this holds the promise if a corner
// case breaks it, so a hostile file cannot crash a host.
func decode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return dec.Decode(n)
}
