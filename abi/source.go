//go:build !wasip1

package abi

import "embed"

// Source is this package's Go source, which the Go SDK imports: `host
// plugin init` writes it with sdk.Source into a plugin project made
// outside a sluice checkout. Plugins (wasip1) do not carry it.
//
//go:embed *.go
var Source embed.FS
