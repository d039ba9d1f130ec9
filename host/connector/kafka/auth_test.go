package kafka

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// roundTrip writes 6 records through an exactly-once sink with conn and
// reads them back with a bounded source with conn, read_committed.
func roundTrip(t *testing.T, conn Connection, topic string) []string {
	t.Helper()
	sink, err := NewSink(SinkConfig{Operator: "out", Connection: conn, Topic: topic, Delivery: DeliveryExactlyOnce, TransactionalIDPrefix: "auth"}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Open(nil); err != nil {
		t.Fatal(err)
	}
	process(t, sink, 0, 6)
	if err := sink.Close(newCollector()); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(SourceConfig{Operator: "in", Connection: conn, Topics: []string{topic}, Bounded: true, Isolation: ReadCommitted}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := newCollector()
	if err := runSource(testContext(t), src, out); err != nil {
		t.Fatal(err)
	}
	return values(out.records())
}

// TestSASLScram: the source and the sink authenticate with SCRAM-SHA-256
// and SCRAM-SHA-512 against kfake's SASL (Kafka's own handshake, so a
// wrong password is refused by the broker, not by a check of ours), and
// a wrong password fails Open saying what to check (kfake hangs up on a
// failed handshake; a Kafka broker answers SASL_AUTHENTICATION_FAILED
// first: both name the sasl options).
func TestSASLScram(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"t256": 1, "t512": 1}, kfake.EnableSASL(),
		kfake.Superuser(SASLScramSHA256, "ann", "pw-256"), kfake.Superuser(SASLScramSHA512, "bo", "pw-512"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct{ mech, user, pass, topic string }{
		{SASLScramSHA256, "ann", "pw-256", "t256"},
		{SASLScramSHA512, "bo", "pw-512", "t512"},
	} {
		conn := Connection{Brokers: c.Addrs(), SASL: &SASL{Mechanism: tc.mech, Username: tc.user, Password: tc.pass}}
		if got := roundTrip(t, conn, tc.topic); !sameStrings(got, sorted(numbered(0, 6))) {
			t.Errorf("%s: read back %v", tc.mech, got)
		}
		conn.SASL.Password, conn.Timeout = "wrong", 5*time.Second
		s, _ := NewSource(SourceConfig{Operator: "in", Connection: conn, Topics: []string{tc.topic}}, 0, 1)
		err := s.Open(nil)
		s.Close()
		if err == nil || !strings.Contains(err.Error(), `source "in" (kafka, brokers `) || !strings.Contains(err.Error(), "check sasl") {
			t.Errorf("%s, wrong password: %v", tc.mech, err)
		}
	}
	// no SASL at all against a broker that wants it
	s, _ := NewSource(SourceConfig{Operator: "in", Connection: Connection{Brokers: c.Addrs(), Timeout: 2 * time.Second}, Topics: []string{"t256"}}, 0, 1)
	if err := s.Open(nil); err == nil {
		t.Error("a client without SASL was let in")
	}
	s.Close()
}

// TestTLS: the source and the sink reach a kfake broker that listens with
// TLS, trusting its certificate through tls.ca-file; a client that does
// not trust it fails Open.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice test broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := kafkatest.Start(1, map[string]int32{"t": 1}, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn := Connection{Brokers: c.Addrs(), TLS: &TLS{CAFile: ca}}
	if got := roundTrip(t, conn, "t"); !sameStrings(got, sorted(numbered(0, 6))) {
		t.Errorf("over TLS, read back %v", got)
	}
	// the system's roots do not hold the test's authority
	s, _ := NewSource(SourceConfig{Operator: "in", Connection: Connection{Brokers: c.Addrs(), TLS: &TLS{}, Timeout: 2 * time.Second}, Topics: []string{"t"}}, 0, 1)
	err = s.Open(nil)
	s.Close()
	if err == nil || !strings.Contains(err.Error(), `source "in" (kafka, brokers `) {
		t.Errorf("an untrusted certificate: %v", err)
	}
}
