package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/abi"
)

func init() { addCommand(newVersionCmd) }

// version is sluice's version when the build sets it:
//
//	go build -ldflags "-X main.version=v0.3.0" ./cmd/host
//
// Otherwise it comes from the build information Go stamps into the binary:
// the module version for "go install ...@v0.3.0", or the commit of the
// checkout it was built from ("devel abc1234", "+dirty" with local changes).
var version string

// versions are what "host version" prints.
type versions struct {
	Sluice, Wazero, Go string
	ABI                int
}

// buildVersions reads the versions from version and the build information.
func buildVersions() versions {
	v := versions{Sluice: version, ABI: abi.Version, Wazero: "unknown", Go: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if v.Sluice == "" {
			v.Sluice = "unknown"
		}
		return v
	}
	v.Go = info.GoVersion
	for _, d := range info.Deps {
		if d.Path == "github.com/tetratelabs/wazero" {
			v.Wazero = d.Version
			if d.Replace != nil {
				v.Wazero = d.Replace.Version + " (replaced)"
			}
		}
	}
	if v.Sluice == "" {
		v.Sluice = mainVersion(info)
	}
	return v
}

// mainVersion is the main module's version, or the commit it was built from.
func mainVersion(info *debug.BuildInfo) string {
	if m := info.Main.Version; m != "" && m != "(devel)" && !strings.HasPrefix(m, "v0.0.0-") {
		return m
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "devel"
	}
	return "devel " + rev + dirty
}

func writeVersions(w io.Writer, v versions) {
	fmt.Fprintf(w, "sluice  %s\nabi     v%d\nwazero  %s\ngo      %s\n", v.Sluice, v.ABI, v.Wazero, v.Go)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the sluice, plugin ABI, wazero and Go versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			writeVersions(cmd.OutOrStdout(), buildVersions())
			return nil
		},
	}
}

// setVersionFlag gives root a --version printing what "host version" prints.
func setVersionFlag(root *cobra.Command) {
	v := buildVersions()
	var b strings.Builder
	writeVersions(&b, v)
	root.Version = v.Sluice
	root.SetVersionTemplate(b.String())
}
