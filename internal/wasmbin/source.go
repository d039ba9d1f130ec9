//go:build !wasip1

package wasmbin

import "embed"

// Source is this package's Go source, which the Go SDK's test kit
// (sdk/go/sdktest) imports: `host plugin init` writes it with sdk.Source
// into a plugin project made outside a sluice checkout. Plugins (wasip1)
// do not carry it.
//
//go:embed *.go
var Source embed.FS
