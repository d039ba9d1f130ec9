package spec

// Builtin is the set of the built-in connectors: what host/pipeline
// parses against when it is given no set. host/connector gives each its
// constructor; a connector only that package knows is added there.
var Builtin = NewSet(Generator, Elements, FileSource, Stdin, Print, FileSink, Discard)
