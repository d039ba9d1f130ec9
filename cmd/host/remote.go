package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/host/server"
)

func init() { addCommand(newRemoteCmd) }

// remote is a client of a sluice server's REST API (docs/openapi.yaml).
type remote struct {
	base, token string
	client      *http.Client
}

func newRemoteCmd() *cobra.Command {
	r := &remote{client: &http.Client{Timeout: time.Minute}}
	cmd := &cobra.Command{
		Use:   "remote",
		Short: "Submit, list, watch, cancel and read the output of jobs on a sluice server (host serve)",
		Long: `Remote talks to a server's REST API: --server (SLUICE_SERVER, default
http://127.0.0.1:8080) with the tenant's token --token (SLUICE_TOKEN).
"remote submit FILE" uploads the plugins the pipeline names by file, under
the pipeline's names for them, and submits the pipeline naming them so.`,
		Args: cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if r.base == "" {
				r.base = orDefault(os.Getenv("SLUICE_SERVER"), "http://127.0.0.1:8080")
			}
			if r.token == "" {
				r.token = os.Getenv("SLUICE_TOKEN")
			}
			if r.token == "" {
				return errors.New("no token: give --token or SLUICE_TOKEN (host serve --dev prints one)")
			}
			r.base = strings.TrimSuffix(r.base, "/")
			return nil
		},
	}
	cmd.PersistentFlags().StringVar(&r.base, "server", "", "the server's URL (default $SLUICE_SERVER, else http://127.0.0.1:8080)")
	cmd.PersistentFlags().StringVar(&r.token, "token", "", "the tenant's API token (default $SLUICE_TOKEN)")
	var n int
	output := &cobra.Command{
		Use: "output ID", Short: "Print what a job's collect sinks kept, one JSON record a line", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out server.Output
			if err := r.do("GET", "/v1/jobs/"+url.PathEscape(args[0])+"/output?n="+strconv.Itoa(n), "", nil, &out); err != nil {
				return err
			}
			for _, rec := range out.Records {
				var line bytes.Buffer
				if err := json.Compact(&line, rec.Value); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n", line.Bytes())
			}
			if out.Truncated {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d of the %d records the sinks received (the newest; the server keeps output-records of them)\n", out.Returned, out.Total)
			}
			return nil
		},
	}
	output.Flags().IntVar(&n, "n", 0, "the newest N records (default every one the server kept)")
	cmd.AddCommand(&cobra.Command{
		Use: "submit FILE", Short: "Upload the pipeline's plugins and submit it; prints the job's id", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := r.submit(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), st.ID)
			fmt.Fprintf(cmd.ErrOrStderr(), "job %s (%s) %s\n", st.ID, st.Name, st.State)
			return nil
		},
	}, &cobra.Command{
		Use: "list", Short: "List the tenant's jobs", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var jobs []server.JobStatus
			if err := r.do("GET", "/v1/jobs", "", nil, &jobs); err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tSTATE\tREAD\tTO SINKS\tSUBMITTED")
			for _, j := range jobs {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\n", j.ID, j.Name, j.State, j.RecordsDone, j.RecordsSunk, j.Submitted.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}, &cobra.Command{
		Use: "watch ID", Short: "Follow a job until it ends; exits 1 unless it FINISHED", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return r.watch(cmd, args[0]) },
	}, &cobra.Command{
		Use: "cancel ID", Short: "Cancel a running job", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var st server.JobStatus
			if err := r.do("POST", "/v1/jobs/"+url.PathEscape(args[0])+"/cancel", "", nil, &st); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "job %s %s\n", st.ID, st.State)
			return nil
		},
	}, output)
	return cmd
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// do sends a request and decodes a 2xx answer into out; any other status
// is an error with the server's message, and every problem it lists.
func (r *remote) do(method, path, contentType string, body []byte, out any) error {
	req, err := http.NewRequest(method, r.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		e := &remoteError{request: method + " " + path, status: res.Status}
		if json.Unmarshal(b, e) != nil || e.Msg == "" {
			return fmt.Errorf("%s %s: %s", method, path, res.Status)
		}
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// remoteError is a refusal of the server: its error body.
type remoteError struct {
	request, status string
	Msg             string           `json:"error"`
	Where           string           `json:"where"`
	Problems        []server.Problem `json:"problems"`
	Reasons         []string         `json:"reasons"`
}

func (e *remoteError) Error() string {
	msg := fmt.Sprintf("%s: %s (%s): %s", e.request, e.status, e.Where, e.Msg)
	for _, why := range e.Reasons {
		msg += "\n  " + why
	}
	return msg
}

// submit uploads every plugin of the pipeline file whose path is a file
// (relative to the pipeline's folder) under the pipeline's name for it,
// points the pipeline at that name, and submits it.
func (r *remote) submit(file string) (server.JobStatus, error) {
	var st server.JobStatus
	src, err := os.ReadFile(file)
	if err != nil {
		return st, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return st, fmt.Errorf("%s: %w", file, err)
	}
	if plugins := mapValue(doc.Content, "plugins"); plugins != nil {
		for i := 0; i+1 < len(plugins.Content); i += 2 {
			name, path := plugins.Content[i].Value, mapValue([]*yaml.Node{plugins.Content[i+1]}, "path")
			if path == nil || path.Kind != yaml.ScalarNode {
				continue
			}
			local := path.Value
			if !filepath.IsAbs(local) {
				local = filepath.Join(filepath.Dir(file), local)
			}
			bin, err := os.ReadFile(local)
			if errors.Is(err, os.ErrNotExist) {
				continue // a plugin the server already holds, by name or digest
			}
			if err != nil {
				return st, fmt.Errorf("plugin %s: %w", name, err)
			}
			if err := r.do("POST", "/v1/plugins?name="+url.QueryEscape(name), "application/wasm", bin, nil); err != nil {
				return st, fmt.Errorf("uploading plugin %s (%s): %w", name, path.Value, err)
			}
			if src, err = renamePath(src, path, name); err != nil {
				return st, fmt.Errorf("%s: plugin %s: %w", file, name, err)
			}
		}
	}
	err = r.do("POST", "/v1/jobs", "application/yaml", src, &st)
	var re *remoteError
	if errors.As(err, &re) && len(re.Problems) > 0 {
		// the problems of the pipeline, at their lines in the user's file
		lines := make([]string, len(re.Problems))
		for i, p := range re.Problems {
			lines[i] = fmt.Sprintf("%s:%d:%d: %s", file, p.Line, p.Col, p.Message)
		}
		return st, errors.New("the server refused the pipeline:\n" + strings.Join(lines, "\n"))
	}
	return st, err
}

// renamePath writes name over the plugin path scalar at its place in src,
// so that every other line keeps its number (the server's problems point
// into the user's file).
func renamePath(src []byte, path *yaml.Node, name string) ([]byte, error) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if path.Line < 1 || path.Line > len(lines) {
		return nil, errors.New("cannot find its path in the file")
	}
	line := lines[path.Line-1]
	col := path.Column - 1
	if col < 0 || col > len(line) {
		return nil, errors.New("cannot find its path in the file")
	}
	token := []byte(path.Value)
	if path.Style == yaml.DoubleQuotedStyle || path.Style == yaml.SingleQuotedStyle {
		token = line[col:]
		end := bytes.IndexByte(token[1:], token[0])
		if end < 0 {
			return nil, errors.New("cannot find its path in the file")
		}
		token = token[:end+2]
	}
	if !bytes.HasPrefix(line[col:], token) {
		return nil, errors.New("cannot find its path in the file")
	}
	q, _ := json.Marshal(name) // a JSON string is a YAML double-quoted one
	lines[path.Line-1] = slices.Concat(line[:col], q, line[col+len(token):])
	return bytes.Join(lines, nil), nil
}

// mapValue is the value of key in the mapping among nodes (a document's
// or a mapping's content), or nil.
func mapValue(nodes []*yaml.Node, key string) *yaml.Node {
	for _, n := range nodes {
		if n.Kind == yaml.DocumentNode {
			return mapValue(n.Content, key)
		}
		if n.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return nil
}

// watch prints a job's state and records as they change, once a second,
// until it ends.
func (r *remote) watch(cmd *cobra.Command, id string) error {
	last := ""
	for {
		var st server.JobStatus
		if err := r.do("GET", "/v1/jobs/"+url.PathEscape(id), "", nil, &st); err != nil {
			return err
		}
		line := fmt.Sprintf("%s %s: %d read, %d to sinks", st.ID, st.State, st.RecordsDone, st.RecordsSunk)
		if line != last {
			fmt.Fprintln(cmd.OutOrStdout(), line)
			last = line
		}
		switch st.State {
		case server.Finished:
			return nil
		case server.Failed, server.Canceled:
			if st.Error != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "error:", st.Error)
			}
			return exitCode(1)
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(time.Second):
		}
	}
}
