// Package wasmbin is the host's one reader of the WebAssembly binary
// format (WebAssembly Core Specification 2.0, chapter 5), in the manner of
// wazero's internal/wasm/binary: the primitive encodings (bytes, LEB128
// integers, vectors, names), the module's sections in their order, and the
// sections that say what a module is (types, imports, functions, tables,
// memories, exports), plus the encoders a rewriter needs. Package plugin
// checks a module against the ABI from what Decode returns, package fuel
// rewrites it from the same sections (a module is read once per load), and
// the Go SDK's test kit (sdk/go/sdktest) checks a plugin's exports with
// it: a bounds fix is made once. It sits at the module's root so that
// both the host and the SDK may import it.
//
// Every read checks its bounds; no input makes the package panic (see
// FuzzDecode). Errors are *Error, of class ErrMalformed or ErrUnsupported,
// with the module offset. What a consumer refuses of what decodes (a
// memory64 memory, a tag import, a parameter count over a limit) is the
// consumer's policy, not the decoder's.
//
// Only the standard library: the fuel rewriter stands on its own.
package wasmbin
