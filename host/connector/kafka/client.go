package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// brokerErrs remembers the last error a connection to a broker ended
// in (dial, TLS, SASL handshake, read or write). franz-go retries such
// errors until the request's context ends, so what the caller gets back
// is often only "context deadline exceeded"; explain then says what the
// brokers last did instead.
type brokerErrs struct{ last atomic.Pointer[error] }

// note keeps err; a cancelled or timed-out request says nothing of the
// brokers, and a connection that opens clears what an earlier one said.
func (b *brokerErrs) note(err error) {
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		b.last.Store(&err)
	}
}

func (b *brokerErrs) lastErr() error {
	if b == nil {
		return nil
	}
	if p := b.last.Load(); p != nil {
		return *p
	}
	return nil
}

func (b *brokerErrs) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		b.last.Store(nil)
		return
	}
	b.note(err)
}

func (b *brokerErrs) OnBrokerWrite(_ kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	b.note(err)
}

func (b *brokerErrs) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	b.note(err)
}

// clientOpts are the franz-go options that reach the cluster as c says;
// errs (may be nil) hears of every failed broker connection.
func (c *Connection) clientOpts(errs *brokerErrs) ([]kgo.Opt, error) {
	id := c.ClientID
	if id == "" {
		id = "sluice"
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID(id),
		kgo.DialTimeout(min(10*time.Second, c.timeout())),
		// a request that keeps failing (an unreachable cluster) ends in
		// an error the user sees rather than in retries for ever
		kgo.RetryTimeout(c.timeout()),
		// a moved leader or an added partition is looked up within a
		// second (franz-go's default waits five)
		kgo.MetadataMinAge(time.Second),
	}
	if errs != nil {
		opts = append(opts, kgo.WithHooks(errs))
	}
	if t := c.TLS; t != nil {
		cfg, err := t.config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s := c.SASL; s != nil {
		switch s.Mechanism {
		case SASLPlain:
			opts = append(opts, kgo.SASL(plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()))
		case SASLScramSHA256:
			opts = append(opts, kgo.SASL(scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()))
		case SASLScramSHA512:
			opts = append(opts, kgo.SASL(scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()))
		}
	}
	return opts, nil
}

func (c *Connection) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (t *TLS) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.ca-file: %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls.cert-file, tls.key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// explain turns a client error into one a Kafka user can act on: what
// failed (doing), where (the role, operator and brokers) and why. A
// request that ran out of time is explained by the last error a broker
// connection ended in (errs), when there was one: a refused SASL
// handshake retried until the deadline is a SASL problem, not a network
// one.
func explain(role, op string, brokers []string, doing string, err error, errs *brokerErrs) error {
	if last := errs.lastErr(); last != nil && errors.Is(err, context.DeadlineExceeded) && !errors.Is(last, context.DeadlineExceeded) {
		err = fmt.Errorf("%w, retried until the time ran out (%w)", last, err)
	}
	where := fmt.Sprintf("%s %q (kafka, brokers %s)", role, op, strings.Join(brokers, ","))
	var ke *kerr.Error
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &ke) && (ke == kerr.TopicAuthorizationFailed || ke == kerr.GroupAuthorizationFailed ||
		ke == kerr.TransactionalIDAuthorizationFailed || ke == kerr.ClusterAuthorizationFailed):
		return fmt.Errorf("%s: %s: authorization refused (%s): the user lacks the ACL for it", where, doing, ke.Message)
	case errors.As(err, &ke) && ke == kerr.SaslAuthenticationFailed:
		return fmt.Errorf("%s: %s: authentication failed: check sasl.username and sasl.password: %w", where, doing, err)
	case errors.As(err, &ke) && ke == kerr.UnknownTopicOrPartition:
		return fmt.Errorf("%s: %s: the topic does not exist", where, doing)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		// a broker that refuses the handshake may just hang up
		return fmt.Errorf("%s: %s: the brokers closed the connection: check sasl (mechanism, username, password) and tls against the listener's: %w", where, doing, err)
	case errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || isDialErr(err):
		hint := ""
		if allLoopback(brokers) {
			hint = " (no broker on this machine? host dev-kafka starts one)"
		}
		return fmt.Errorf("%s: %s: cannot reach the brokers%s: %w", where, doing, hint, err)
	}
	return fmt.Errorf("%s: %s: %w", where, doing, err)
}

func isDialErr(err error) bool {
	s := err.Error()
	return strings.Contains(s, "unable to dial") || strings.Contains(s, "connection refused")
}

// allLoopback: every broker is on this machine (localhost, 127.x, ::1).
func allLoopback(brokers []string) bool {
	for _, b := range brokers {
		host, _, err := net.SplitHostPort(b)
		if err != nil {
			return false
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return len(brokers) > 0
}

// fetchOpts are the client options of c's fetch sizes.
func (c SourceConfig) fetchOpts() []kgo.Opt {
	var opts []kgo.Opt
	if c.MaxPartitionFetchBytes > 0 {
		opts = append(opts, kgo.FetchMaxPartitionBytes(c.MaxPartitionFetchBytes))
	}
	if c.FetchMaxBytes > 0 {
		opts = append(opts, kgo.FetchMaxBytes(c.FetchMaxBytes))
	}
	return opts
}
