//go:build !wasip1

package sdk

import "embed"

// Source is the SDK's own Go source (its packages and sdktest, tests
// left out by the reader), for `host plugin init`, which writes it into a
// plugin project made outside a sluice checkout. Plugins (wasip1) do not
// carry it.
//
//go:embed *.go internal/hostcall/*.go internal/mpvalue/*.go sdktest/*.go
var Source embed.FS
