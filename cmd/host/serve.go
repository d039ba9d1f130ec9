package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/host/server"
	"github.com/sluicehq/sluice/host/settings"
	"github.com/sluicehq/sluice/host/web"
)

func init() { addCommand(newServeCmd) }

// requestGrace bounds how long shutdown waits for requests in flight.
const requestGrace = 30 * time.Second

func newServeCmd() *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the multi-tenant server: REST API under /v1, Prometheus /metrics and the dashboard under /ui/",
		Long: `Serve runs many tenants' jobs in this process. Tenants, their token hashes
and quotas come from the host config (--config, keys tenants: or
tenants-file:); listen, rate-limit, drain-timeout, ... may also come from
SLUICE_* variables and flags. "host serve token" makes a token and the
hash to put in the config. To try the server on this machine without a
config, --dev makes one tenant, dev, with the default quotas and prints its
token; it listens on loopback only.

On SIGTERM or SIGINT it refuses new jobs (503; /readyz answers 503), lets
running jobs end by themselves for up to drain-timeout, cancels the rest
and closes every plugin instance, still answering reads (a job's status,
metrics, output) meanwhile; then it stops accepting connections and exits
0. A second SIGTERM or SIGINT quits at once, cutting the drain short.

Everything the server holds lives in memory only and is lost when it
stops: uploaded plugins, the job history (job-history ended jobs per
tenant) and their collected output. Upload the plugins again after a
restart, and read a job's output before the server stops.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, logLevel) },
	}
	f := cmd.Flags()
	f.String("listen", "", "address to listen on (default 127.0.0.1:8080)")
	f.String("tenants-file", "", "YAML file with tenants: (and admin-token-sha256:)")
	f.Duration("drain-timeout", 0, "how long shutdown lets running jobs end by themselves before cancelling them (default 10s)")
	f.Float64("rate-limit", 0, "requests per second per tenant (default 20)")
	f.Int("rate-burst", 0, "requests a tenant may make at once (default 40)")
	f.Int64("max-request-bytes", 0, "largest plugin upload (default 16 MiB)")
	f.Int("max-pipeline-bytes", 0, "largest pipeline a tenant may submit, at most 4 MiB (default 1 MiB)")
	f.Int("slots", 0, "task slots this host offers over all tenants (0: unlimited)")
	f.Bool("dev", false, "try the server on this machine: one tenant, dev, whose token is printed; loopback only, and no tenants configured")
	f.StringVar(&logLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
	settings.AddFlags(f, append(append([]string{}, settings.Keys...), settings.ServerKeys...)...)
	cmd.AddCommand(newServeTokenCmd())
	return cmd
}

func serve(cmd *cobra.Command, logLevel string) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	file := settingsFile(cmd)
	hs, ss, err := settings.LoadServer(file, os.Environ(), cmd.Flags())
	if err != nil {
		return err
	}
	if dev, _ := cmd.Flags().GetBool("dev"); dev {
		if err := devTenant(cmd.ErrOrStderr(), &ss); err != nil {
			return err
		}
	}
	if len(ss.Tenants) == 0 {
		return errors.New("no tenants: list them in the host config (tenants: or tenants-file:); see configs/serve/host.yaml. To try the server on this machine, serve --dev makes one tenant and prints its token")
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	srv, err := server.New(server.Config{Host: hs, Server: ss, Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", ss.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", ss.Listen, err)
	}
	hsrv := web.HTTPServer(web.New(srv, ss))
	served := make(chan error, 1)
	go func() { served <- hsrv.Serve(ln) }()
	fmt.Fprintf(cmd.ErrOrStderr(), "sluice: serving on http://%s (dashboard http://%s/ui/), %d tenants\n", ln.Addr(), ln.Addr(), len(ss.Tenants))

	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		_ = srv.Shutdown(context.Background())
		return fmt.Errorf("serving: %w", err)
	}
	// The jobs drain first, while the API still answers: /readyz says 503
	// and a submission is refused, but reads (a job's status, output,
	// metrics) are served until every job has ended.
	// a second signal quits at once (main gave the signals back their
	// default action), cutting the drain short
	hint := "signal again to quit at once"
	if sig := signalled(ctx); sig != nil {
		hint = againHint(sig)
	}
	log.Info("shutting down: draining jobs, still serving reads ("+hint+")", "drain_timeout", ss.DrainTimeout)
	jctx, cancel := context.WithTimeout(context.Background(), ss.DrainTimeout+requestGrace)
	defer cancel()
	jobsErr := srv.Shutdown(jctx)
	log.Info("shutting down: no new connections")
	rctx, rcancel := context.WithTimeout(context.Background(), requestGrace)
	err = hsrv.Shutdown(rctx)
	rcancel()
	if err != nil {
		log.Warn("requests still in flight were cut", "error", err)
		_ = hsrv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("serving ended", "error", err)
	}
	if jobsErr != nil {
		return jobsErr
	}
	log.Info("stopped: every job ended and every plugin instance is closed")
	return nil
}

// devTenant gives a server without tenants one, "dev", with the default
// quotas and a new token it prints: a quick way to try the server. It
// listens on loopback only: a server others can reach needs its tenants
// configured.
func devTenant(w io.Writer, ss *settings.Server) error {
	if len(ss.Tenants) > 0 {
		return fmt.Errorf("--dev makes a tenant of its own, and the host config lists %d: drop --dev or the tenants", len(ss.Tenants))
	}
	if !loopback(ss.Listen) {
		return fmt.Errorf("--dev listens on loopback only (127.0.0.1, ::1 or localhost), not %s: a server other machines can reach needs tenants in the host config", ss.Listen)
	}
	token := newToken()
	tc := settings.DefaultTenant()
	tc.Name, tc.TokenSHA256 = "dev", server.HashToken(token)
	ss.Tenants = []settings.Tenant{tc}
	fmt.Fprintf(w, "sluice: --dev: one tenant, dev, for this run only; its token: %s\n", token)
	return nil
}

// loopback reports whether the listen address is on this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newToken is a random API token.
func newToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "sluice_" + hex.EncodeToString(b[:])
}

func newServeTokenCmd() *cobra.Command {
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "token [TOKEN]",
		Short: "Make an API token and the token-sha256 to put in the host config",
		Long: `Token prints a new random API token and its SHA-256, the value of a
tenant's token-sha256 (or admin-token-sha256) in the host config. Given a
TOKEN (or --stdin), it prints that token's hash instead. Give the token to
the tenant; the config keeps only the hash.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var token string
			switch {
			case fromStdin:
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && line == "" {
					return fmt.Errorf("reading the token from stdin: %w", err)
				}
				token = strings.TrimSpace(line)
			case len(args) == 1:
				token = args[0]
			default:
				token = newToken()
			}
			if token == "" {
				return errors.New("the token is empty")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "token:        %s\ntoken-sha256: %s\n", token, server.HashToken(token))
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the token from stdin (keeps it out of the shell history)")
	return cmd
}
