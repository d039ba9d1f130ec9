package sdk

import "github.com/sluicehq/sluice/abi"

// Operator is the registered operator of a plugin, returned by the
// registration functions so it can be described further:
//
//	sdk.Process(fn).Named("high-temp").Outputs("alerts")
//
// A plugin holds exactly one operator, registered from an init function.
type Operator struct {
	kind    abi.Kind
	keyed   bool
	name    string
	outputs []string

	mapFn     func(Record) (Record, error)
	map2Fn    func(Record) (Record, error)
	filterFn  func(Record) (bool, error)
	flatMapFn func(Record, Emitter) error
	processFn func(Record, Context) error
	reduceFn  func(acc, r Record) (Record, error)
	windowFn  func(Window, []Record, Emitter) error
	partFn    func(Key, int) int
	keyFn     func(Record) (Key, error)
	timerFn   func(Timer, Context) error // OnTimer

	state Snapshotter // operator state, when declared with State
	decls []StateDecl // keyed state slots declared with Declare
}

// Named sets the name reported by sluice_describe. The default is the last
// element of the main package's import path (e.g. "valid").
func (o *Operator) Named(name string) *Operator {
	o.name = name
	return o
}

// Outputs declares the side-output tags the operator emits to with
// Context.EmitTo. It panics on an empty, too long or repeated tag.
func (o *Operator) Outputs(tags ...string) *Operator {
	for _, t := range tags {
		if t == "" || len(t) > abi.MaxTagLen {
			panic("sluice sdk: a side-output tag must have 1 to 256 bytes")
		}
		if o.output(t) >= 0 {
			panic("sluice sdk: side-output tag " + t + " declared twice")
		}
		o.outputs = append(o.outputs, t)
	}
	return o
}

// output returns the output index of tag (0 is the main output, i+1 the
// i-th declared side output), or -1.
func (o *Operator) output(tag string) int {
	if tag == "" {
		return 0
	}
	for i, t := range o.outputs {
		if t == tag {
			return i + 1
		}
	}
	return -1
}

// registry is what init functions registered.
type registry struct {
	op       *Operator
	onOpen   func(OpenContext) error
	onClose  func() error
	onFinish func(Emitter) error
}

var reg registry

func register(o *Operator) *Operator {
	if reg.op != nil {
		panic("sluice sdk: a plugin holds one operator, and a " + string(reg.op.kind) + " is already registered")
	}
	reg.op = o
	return o
}

// Reset forgets the registered operator and hooks and the state of the
// running instance. It exists for tests that register several operators
// in one process; plugins never call it.
func Reset() {
	reg = registry{}
	eng.newInstance()
}
