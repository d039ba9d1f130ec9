package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/jsonout"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/settings"
)

func init() { addCommand(newPluginCmd) }

// pluginCommands holds the constructors of the plugin subcommands defined
// in other files (plugin_check.go, plugin_init.go); they append from init.
var pluginCommands []func() *cobra.Command

func newPluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Inspect a Wasm plugin or run it over JSON lines",
		// a parent with no Run prints its help and exits 0 on any word:
		// an unknown subcommand must fail, as at the top level
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if cmd.SuggestionsMinimumDistance <= 0 {
				cmd.SuggestionsMinimumDistance = 2
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return fmt.Errorf("%s (see %s --help)", msg, cmd.CommandPath())
		},
	}
	f := cmd.PersistentFlags()
	addPluginLimitFlags(f)
	settings.AddFlags(f, "max-output-bytes", "max-module-bytes", "fuel-rate")
	cmd.AddCommand(newPluginInspectCmd(), newPluginRunCmd())
	for _, c := range pluginCommands {
		cmd.AddCommand(c())
	}
	return cmd
}

// newPluginHost builds a plugin host from the host settings.
func newPluginHost(cmd *cobra.Command) (*plugin.Host, error) {
	s, err := hostSettings(cmd)
	if err != nil {
		return nil, err
	}
	return pluginHostOf(cmd, s)
}

// pluginHostOf builds a plugin host from the host settings s.
func pluginHostOf(cmd *cobra.Command, s settings.Settings) (*plugin.Host, error) {
	cfg := s.PluginConfig()
	h, err := plugin.New(cmd.Context(), cfg)
	if err != nil && cfg.CacheDir != "" {
		// An unusable cache folder costs compile time, not correctness.
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v; compiling without a cache\n", err)
		cfg.CacheDir = ""
		h, err = plugin.New(cmd.Context(), cfg)
	}
	return h, err
}

func newPluginInspectCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect FILE.wasm",
		Short: "Show a plugin's ABI version, kind, exports, imports, memory, size and sha256",
		Long: `Inspect checks FILE.wasm against ABI v1 and the host's limits, then prints
what it declares; the kind comes from the plugin's sluice_describe when it
exports one. A file that is not a loadable plugin exits 1 with every
problem found.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := newPluginHost(cmd)
			if err != nil {
				return err
			}
			defer h.Close(context.Background())
			show := func(info plugin.Info) error {
				if asJSON {
					return jsonout.NewEncoder(cmd.OutOrStdout()).Encode(info)
				}
				printInfo(cmd.OutOrStdout(), info)
				return nil
			}
			m, err := h.LoadFile(cmd.Context(), args[0])
			if err != nil {
				// what the module holds still helps its author: the exports
				// and imports beside the problems (a file within the size
				// limit that parses as wasm)
				if bin, rerr := readCapped(args[0], h.Config().MaxModuleBytes); rerr == nil {
					if info, ok := plugin.StaticInfo(strings.TrimSuffix(filepath.Base(args[0]), ".wasm"), args[0], bin); ok {
						_ = show(info)
					}
				}
				return err
			}
			info, err := m.Inspect(cmd.Context())
			if err != nil {
				return err
			}
			return show(info)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the description as JSON")
	return cmd
}

func printInfo(w io.Writer, info plugin.Info) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	line("plugin", "%s", info.Name)
	if info.Path != "" {
		line("file", "%s", info.Path)
	}
	line("abi", "v%d", info.ABIVersion)
	line("kind", "%s (from %s)", info.Kind, info.KindFrom)
	if info.SDK != "" {
		line("sdk", "%s", info.SDK)
	}
	if len(info.Outputs) > 0 {
		line("outputs", "%s", strings.Join(info.Outputs, ", "))
	}
	if info.KindFrom == abi.ExportDescribe {
		keyed := "no"
		if info.Keyed {
			keyed = "yes (needs a key-by)"
		}
		line("keyed", "%s", keyed)
	}
	line("size", "%d bytes", info.Size)
	line("sha256", "%s", info.SHA256)
	max := "none"
	if info.Memory.HasMax {
		max = pages(info.Memory.Max)
	}
	line("memory", "min %s, max %s", pages(info.Memory.Min), max)
	line("exports", "%d", len(info.Exports))
	tw.Flush()
	list := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range info.Exports {
		fmt.Fprintln(list, strings.TrimRight(fmt.Sprintf("  %s\t%s %s", e.Name, e.Kind, e.Signature), " "))
	}
	list.Flush()
	fmt.Fprintf(w, "imports  %d\n", len(info.Imports))
	for _, im := range info.Imports {
		fmt.Fprintln(list, strings.TrimRight(fmt.Sprintf("  %s.%s\t%s %s", im.Module, im.Name, im.Kind, im.Signature), " "))
	}
	list.Flush()
}

// pages renders a page count with its size.
func pages(n uint64) string {
	if n%16 == 0 {
		return fmt.Sprintf("%d pages (%d MiB)", n, n/16)
	}
	if n < 16 {
		return fmt.Sprintf("%d pages (%d KiB)", n, n*64)
	}
	return fmt.Sprintf("%d pages (%.1f MiB)", n, float64(n)/16)
}

type runOptions struct {
	input  string
	config []string
	key    string
	batch  int
}

func newPluginRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run FILE.wasm --input records.jsonl",
		Short: "Run one operator plugin over JSON lines and print its output as JSON lines",
		Long: `Run loads FILE.wasm, opens it as subtask 1 of 1 with the --operator-config values,
and sends it the records of --input (one JSON object per line; "-" reads
standard input) in batches. Each output record is printed as one line
{"port": "main" or a side-output tag, "key": ..., "record": {...}} with the
record's fields in their order. With --key FIELD the records are keyed by
that field and the plugin gets keyed state (held in memory, up to the
state-memory setting, as in a job), as after a keyBy. --operator-config values are JSON when they parse as JSON (30, true,
[1,2]), strings otherwise. --config is the host settings file, as for every
command. A summary goes to standard error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlugin(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.input, "input", "", "JSON-lines file of input records (\"-\" for standard input)")
	addOperatorConfigFlag(f, &o.config, "operator config entry key=value at open (repeatable)")
	f.StringVar(&o.key, "key", "", "key the records by this top-level field (keyed state for reduce/process)")
	f.IntVar(&o.batch, "batch", 256, "records per batch")
	settings.AddFlags(f, "state-memory")
	cmd.MarkFlagRequired("input")
	return cmd
}

// addOperatorConfigFlag adds --operator-config, the operator's config as
// key=value entries (plugin run and check; it was --config, which is the
// host settings file everywhere).
func addOperatorConfigFlag(f *pflag.FlagSet, entries *[]string, usage string) {
	f.StringArrayVar(entries, "operator-config", nil, usage)
}

// parseConfig turns the --operator-config key=value entries into the
// operator's config map. A --config that is key=value is the old spelling
// of --operator-config: it is refused, naming the new one.
func parseConfig(cmd *cobra.Command, entries []string) (map[string]any, error) {
	if file, _ := cmd.Flags().GetString("config"); strings.Contains(file, "=") {
		if _, err := os.Stat(file); err != nil {
			return nil, fmt.Errorf("--config %q: the operator's config is --operator-config key=value now; --config is the host settings file (YAML), as for every command", file)
		}
	}
	cfg := map[string]any{}
	for _, e := range entries {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--operator-config %q: want key=value (the operator's config; the host settings file is --config FILE)", e)
		}
		cfg[k] = configValue(v)
	}
	return cfg, nil
}

func configValue(s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return s
	}
	return numbers(v)
}

// numbers turns json.Number into int64 or float64, recursively.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

func runPlugin(cmd *cobra.Command, file string, o runOptions) error {
	if o.batch < 1 {
		return fmt.Errorf("--batch must be at least 1, got %d", o.batch)
	}
	cfg, err := parseConfig(cmd, o.config)
	if err != nil {
		return err
	}
	var in io.Reader = cmd.InOrStdin()
	name := "standard input"
	if o.input != "-" {
		f, err := os.Open(o.input)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, o.input
	}
	hs, err := hostSettings(cmd)
	if err != nil {
		return err
	}
	h, err := pluginHostOf(cmd, hs)
	if err != nil {
		return err
	}
	defer h.Close(context.Background())
	m, err := h.LoadFile(cmd.Context(), file)
	if err != nil {
		return err
	}
	info, err := m.Inspect(cmd.Context())
	if err != nil {
		return err
	}
	if info.Kind == abi.KindPartitioner || info.Kind == abi.KindKeySelector {
		return fmt.Errorf("plugin %q is a %s: plugin run runs operators (map, filter, flat-map, process, reduce)", m.Name(), info.Kind)
	}
	if info.Keyed && o.key == "" {
		return fmt.Errorf("plugin %q keeps keyed state (its sluice_describe): give --key FIELD to key the records by a field, as a key-by does", m.Name())
	}
	out := &jsonLines{w: bufio.NewWriter(cmd.OutOrStdout()), ports: []string{"main"}}
	defer out.w.Flush()
	oc := &runtime.OpenContext{
		Operator: m.Name(), Parallelism: 1, MaxParallelism: 128, Config: cfg,
		Port: out.port, Kind: pipeline.Kind(info.Kind), // held to its kind, as in a job
	}
	if o.key != "" {
		// the store and the limit of a job's keyed operator subtask
		oc.KeyGroupStart, oc.KeyGroupEnd = 0, oc.MaxParallelism-1
		st := runtime.NewKeyedStore(oc.MaxParallelism, oc.KeyGroupStart, oc.KeyGroupEnd)
		st.SetLimit(hs.RuntimeOptions().StateBytes)
		oc.State = st
	}
	op := m.NewOperator(cmd.Context(), m.Name(), cfg)
	if err := op.Open(oc); err != nil {
		return err
	}
	defer printGuestOutput(cmd.ErrOrStderr(), m.Name(), op)
	records, err := feed(in, name, o, func(batch []byte, count int) error {
		return op.Process(0, batch, count, out)
	})
	if err != nil {
		op.Close(nil)
		return err
	}
	if err := op.Close(out); err != nil {
		return err
	}
	if err := out.w.Flush(); err != nil {
		return err
	}
	var per []string
	for i, p := range out.ports {
		if i < len(out.counts) && out.counts[i] > 0 { // counts grow with the first record a port emits
			per = append(per, fmt.Sprintf("%s %d", p, out.counts[i]))
		}
	}
	summary := "none"
	if len(per) > 0 {
		summary = strings.Join(per, ", ")
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d records in, out: %s\n", m.Name(), records, summary)
	return nil
}

// feed reads JSON lines into batches of envelopes and hands each to send.
func feed(in io.Reader, name string, o runOptions, send func([]byte, int) error) (int, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var w abi.Writer
	records, lineNo := 0, 0
	var lines []int // the line of each record of the batch
	// sendAt sends the batch, naming its input lines when the plugin fails:
	// the line of the record its error names (the SDKs' 0-based "record
	// N: " within the call), else the batch's lines
	sendAt := func() error {
		err := send(w.Buf, w.Count)
		if err == nil {
			return nil
		}
		hint := ""
		var pe *plugin.PluginError
		if o.key == "" && (errors.Is(err, plugin.ErrState) || errors.As(err, &pe) && pe.Status == abi.StatusState) {
			hint = " (plugin run: give --key FIELD to key the records, as a key-by does)"
		}
		if errors.As(err, &pe) {
			if n, stripped, ok := pe.RecordIndex(); ok && n < len(lines) {
				return fmt.Errorf("%s:%d: %w%s", name, lines[n], stripped, hint)
			}
		}
		if w.Count == 1 {
			return fmt.Errorf("%s:%d: %w%s", name, lines[0], err, hint)
		}
		return fmt.Errorf("%s:%d-%d, a batch of %d records (--batch 1 names the record): %w%s", name, lines[0], lines[len(lines)-1], w.Count, err, hint)
	}
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		v, err := codec.JSONToMsgpack(nil, []byte(line))
		if err != nil {
			return records, fmt.Errorf("%s:%d: %v", name, lineNo, err)
		}
		if abi.TypeOf(v) != abi.TypeMap {
			return records, fmt.Errorf("%s:%d: a record must be a JSON object, not %s", name, lineNo, abi.TypeOf(v).Phrase())
		}
		var key []byte
		if o.key != "" {
			raw, ok, err := abi.MapField(v, o.key)
			if err != nil || !ok {
				return records, fmt.Errorf("%s:%d: the record has no field %q for --key", name, lineNo, o.key)
			}
			if abi.IsNil(raw) {
				return records, fmt.Errorf("%s:%d: the --key field %q is null", name, lineNo, o.key)
			}
			if _, err := abi.KeyHash(raw); err != nil { // what a key-by refuses
				return records, fmt.Errorf("%s:%d: the --key field %q is no key: %s", name, lineNo, o.key, keyProblem(err, raw))
			}
			key, _ = abi.CanonicalKey(nil, raw) // as a key-by hands it on
		}
		if w.Count == 0 {
			lines = lines[:0]
		}
		lines = append(lines, lineNo)
		w.Append(0, false, key, v)
		records++
		if w.Count == o.batch {
			if err := sendAt(); err != nil {
				return records, err
			}
			w.Reset()
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return records, fmt.Errorf("%s:%d: line longer than 16 MiB", name, lineNo+1)
		}
		return records, fmt.Errorf("%s:%d: %v", name, lineNo+1, err)
	}
	if w.Count > 0 {
		return records, sendAt()
	}
	return records, nil
}

// jsonLines is the collector of plugin run: it prints every record.
type jsonLines struct {
	w      *bufio.Writer
	ports  []string // engine port -> name ("main" for 0)
	counts []int
	line   []byte
}

func (j *jsonLines) port(tag string) int {
	if tag == "" {
		return 0
	}
	for i, p := range j.ports[1:] {
		if p == tag {
			return i + 1
		}
	}
	j.ports = append(j.ports, tag)
	return len(j.ports) - 1
}

func (j *jsonLines) Emit(port int, buf []byte, count int) error {
	for len(j.counts) < len(j.ports) {
		j.counts = append(j.counts, 0)
	}
	name, _ := jsonout.Marshal(j.ports[port])
	rd := abi.NewReader(buf, count)
	for rd.Next() {
		r := rd.Record()
		b := append(j.line[:0], `{"port":`...)
		b = append(b, name...)
		var err error
		if r.Key != nil {
			b = append(b, `,"key":`...)
			if b, err = codec.MsgpackToJSON(b, r.Key); err != nil {
				return fmt.Errorf("output key: %w", err)
			}
		}
		if r.HasTime {
			b = append(b, `,"time":`...)
			b = strconv.AppendInt(b, r.Time, 10)
		}
		b = append(b, `,"record":`...)
		if b, err = codec.MsgpackToJSON(b, r.Value); err != nil {
			return fmt.Errorf("output record: %w", err)
		}
		b = append(b, "}\n"...)
		j.w.Write(b)
		j.line = b
		j.counts[port]++
	}
	return rd.Err()
}

// printGuestOutput shows what the plugin wrote to stdout and stderr,
// escaped (plugin.PrintableLog) and each line behind "| ", so that no
// guest line passes for one of the host's.
func printGuestOutput(w io.Writer, name string, op *plugin.Operator) {
	stdout, stderr := op.Output()
	for _, s := range []struct{ what, text string }{{"stdout", stdout}, {"stderr", stderr}} {
		if s.text != "" {
			fmt.Fprintf(w, "plugin %s %s (tail):\n", name, s.what)
			for _, line := range strings.SplitAfter(strings.TrimSuffix(s.text, "\n"), "\n") {
				fmt.Fprintf(w, "| %s\n", strings.TrimSuffix(line, "\n"))
			}
		}
	}
}

// readCapped reads path when it is at most limit bytes.
func readCapped(path string, limit int) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > int64(limit) {
		return nil, fmt.Errorf("%s: not a regular file within %d bytes", path, limit)
	}
	return os.ReadFile(path)
}

// keyProblem is why abi.KeyHash refused key, without the decoder's byte
// offset (an abi.KeyProblem has none: "a key must be ..., not a map").
func keyProblem(err error, key []byte) string {
	var de *abi.DecodeError
	switch {
	case !errors.As(err, &de):
		return err.Error()
	case de.Detail != "":
		return de.Detail
	case de.Err != nil:
		return de.Err.Error() + " (" + abi.TypeOf(key).Phrase() + ")"
	}
	return err.Error()
}
