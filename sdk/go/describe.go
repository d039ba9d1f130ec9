package sdk

import (
	"runtime/debug"
	"strings"

	"github.com/sluicehq/sluice/abi"
)

// describe implements sluice_describe: one msgpack map on port 0,
//
//	{"kind": "filter", "sdk": "go", "name": "valid", "outputs": [], "keyed": false}
//
// with the keys of abi.Describe: "keyed" (the operator uses keyed state:
// KeyedProcess or Reduce) and, when slots were declared (Declare),
// "state". It may be called before open.
func (e *engine) describe() error {
	op := reg.op
	if op == nil {
		return errNoOperator
	}
	e.beginCall()
	n := 5
	if len(op.decls) > 0 {
		n++
	}
	b := abi.AppendMapHeader(nil, n)
	b = abi.AppendStr(abi.AppendStr(b, "kind"), string(op.kind))
	b = abi.AppendStr(abi.AppendStr(b, "sdk"), "go")
	b = abi.AppendStr(abi.AppendStr(b, "name"), op.describeName())
	b = abi.AppendArrayHeader(abi.AppendStr(b, "outputs"), len(op.outputs))
	for _, t := range op.outputs {
		b = abi.AppendStr(b, t)
	}
	b = abi.AppendBool(abi.AppendStr(b, "keyed"), op.keyed)
	if len(op.decls) > 0 {
		b = appendDecls(abi.AppendStr(b, "state"), op.decls)
	}
	e.outs[0].w.AppendRaw(b)
	return e.flush()
}

// describeName is the name given with Named, else the last element of the
// main package's path.
func (o *Operator) describeName() string {
	if o.name != "" {
		return o.name
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		p := bi.Path[strings.LastIndexByte(bi.Path, '/')+1:]
		return strings.TrimSuffix(p, ".test")
	}
	return ""
}
