package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/plugin/conformance"
)

func init() { pluginCommands = append(pluginCommands, newPluginCheckCmd) }

func newPluginCheckCmd() *cobra.Command {
	var (
		kind    string
		config  []string
		records int
	)
	cmd := &cobra.Command{
		Use:   "check FILE.wasm",
		Short: "Run a plugin through the conformance kit and print a PASS/FAIL table",
		Long: `Check runs FILE.wasm through the obligations of ABI v1 with the real host:
the marker and exports, describe and its kind, open with an empty config
(or the --operator-config values), an empty batch, a large batch of transactions-like
records, malformed input (a truncated batch, a count larger than the
records, a record that is not an envelope) answered with the malformed-input
status (-1) rather than a trap or another status, well-formed output, the same output for the same input
on a fresh instance, and close. A partitioner also goes through the custom
partitioner rules (range, same key same channel, batching, one channel).
It prints one PASS or FAIL line per check and exits 1 on any failure.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k := abi.Kind(kind)
			if k != "" && !conformance.KnownKind(k) {
				return fmt.Errorf("--kind %q: not a plugin kind", kind)
			}
			cfg, err := parseConfig(cmd, config)
			if err != nil {
				return err
			}
			if _, err := os.Stat(args[0]); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s does not exist; %s", args[0], buildHint(args[0]))
			}
			h, err := newPluginHost(cmd)
			if err != nil {
				return err
			}
			defer h.Close(cmd.Context())
			rep, err := conformance.CheckFile(cmd.Context(), args[0], conformance.Options{
				Kind: k, Config: cfg, Records: records, Host: h,
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprint(w, rep.String())
			if f := rep.Failures(); len(f) > 0 {
				notRun := ""
				if n := len(rep.Skipped()); n > 0 {
					notRun = fmt.Sprintf(", %d not run", n)
				}
				fmt.Fprintf(w, "FAIL %s: %d of %d checks failed%s\n", args[0], len(f), len(rep), notRun)
				return exitCode(1)
			}
			fmt.Fprintf(w, "PASS %s: %d checks\n", args[0], len(rep))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", "", "the kind the plugin must be (map, filter, flat-map, process, reduce, co-map, co-process, partitioner, key-selector, process-window)")
	addOperatorConfigFlag(f, &config, "operator config entry key=value at open (repeatable; default an empty config)")
	f.IntVar(&records, "records", conformance.LargeBatch, "records in the large batch")
	return cmd
}
