package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

const hashA = "9a12a5d055129f6bda2e9ef5e898194500ca5115d6f26ec024e9518e36c2ae0f"
const hashB = "3767e6cdb6757a6683fc1e8b9d513fef132a01346372c19b8077ba6d9c1321c6"

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadServerInlineTenantsEnvAndFlags(t *testing.T) {
	file := write(t, t.TempDir(), "host.yaml", `listen: 127.0.0.1:9000
rate-limit: 5
memory-pages: 128
call-timeout: 3s
fuel-rate: 4000000000
tenants:
  - name: a
    token-sha256: `+hashA+`
    slots: 8
    memory-pages: 2048
  - name: b
    token-sha256: `+hashB+`
    instance-pages: 64
    call-timeout: 1s
    fuel-rate: 1000000000
`)
	flags := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	flags.String("listen", "", "")
	if err := flags.Parse([]string{"--listen=127.0.0.1:9100"}); err != nil {
		t.Fatal(err)
	}
	hs, ss, err := LoadServer(file, []string{"SLUICE_RATE_LIMIT=7", "SLUICE_DRAIN_TIMEOUT=3s", "SLUICE_MAX_PIPELINE_BYTES=65536"}, flags)
	if err != nil {
		t.Fatal(err)
	}
	if ss.MaxPipelineBytes != 65536 || ss.MaxRequestBytes != DefaultServer().MaxRequestBytes {
		t.Errorf("max-pipeline-bytes %d, max-request-bytes %d: want the environment's and the default", ss.MaxPipelineBytes, ss.MaxRequestBytes)
	}
	if ss.Listen != "127.0.0.1:9100" || ss.RateLimit != 7 || ss.DrainTimeout != 3*time.Second || ss.RateBurst != DefaultServer().RateBurst {
		t.Errorf("server settings %+v: want the flag's listen, the environment's rate and drain, the default burst", ss)
	}
	if hs.MemoryPages != 128 {
		t.Errorf("host memory-pages %d", hs.MemoryPages)
	}
	a, b := ss.Tenants[0], ss.Tenants[1]
	if a.Name != "a" || a.Slots != 8 || a.MemoryPages != 2048 || a.InstancePages != 128 || a.CallTimeout != 3*time.Second ||
		a.FuelRate != 4e9 || a.RunningJobs != DefaultTenant().RunningJobs {
		t.Errorf("tenant a %+v: quotas given, instance limits from the host, the rest default", a)
	}
	if b.InstancePages != 64 || b.CallTimeout != time.Second || b.FuelRate != 1e9 || b.Slots != DefaultTenant().Slots {
		t.Errorf("tenant b %+v", b)
	}
	// host settings alone (host run) accept a server config file too
	if _, err := Load(file, nil, nil); err != nil {
		t.Errorf("Load of a server config: %v", err)
	}
}

func TestLoadServerTenantsFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "tenants.yaml", "admin-token-sha256: "+hashB+"\ntenants:\n  - {name: a, token-sha256: "+hashA+"}\n")
	file := write(t, dir, "host.yaml", "tenants-file: tenants.yaml\n")
	_, ss, err := LoadServer(file, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Tenants) != 1 || ss.Tenants[0].Name != "a" || ss.AdminTokenSHA256 != hashB {
		t.Errorf("from the tenants file: %+v, admin %q", ss.Tenants, ss.AdminTokenSHA256)
	}
	// from the environment, relative to the working directory
	t.Chdir(dir)
	_, ss, err = LoadServer("", []string{"SLUICE_TENANTS_FILE=tenants.yaml"}, nil)
	if err != nil || len(ss.Tenants) != 1 {
		t.Errorf("SLUICE_TENANTS_FILE: %v, %d tenants", err, len(ss.Tenants))
	}
}

func TestLoadServerRefusesBadTenants(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown key": {"tenants:\n  - {name: a, token-sha256: " + hashA + ", slot: 4}\n",
			`tenants[0] a: slot: unknown key (known: name, token-sha256, slots`},
		"no token":       {"tenants:\n  - {name: a}\n", "tenants[0] a: needs token-sha256"},
		"bad hash":       {"tenants:\n  - {name: a, token-sha256: abc}\n", "token-sha256: must be 64 hex digits"},
		"zero quota":     {"tenants:\n  - {name: a, token-sha256: " + hashA + ", slots: 0}\n", "slots: must be in 1.."},
		"wrong type":     {"tenants:\n  - {name: a, token-sha256: " + hashA + ", running-jobs: many}\n", `running-jobs: must be a whole number, got "many"`},
		"zero fuel rate": {"tenants:\n  - {name: a, token-sha256: " + hashA + ", fuel-rate: 0}\n", "fuel-rate: must be in 1.."},
		"bad name":       {"tenants:\n  - {name: A B, token-sha256: " + hashA + "}\n", `name: "A B": use 1 to 63 lower-case letters`},
		"twice": {"tenants:\n  - {name: a, token-sha256: " + hashA + "}\n  - {name: a, token-sha256: " + hashB + "}\n",
			`tenants[1]: tenant "a" is listed twice`},
		"shared token": {"admin-token-sha256: " + hashA + "\ntenants:\n  - {name: a, token-sha256: " + hashA + "}\n",
			"token-sha256 is also the admin's"},
		"memory below one instance": {"tenants:\n  - {name: a, token-sha256: " + hashA + ", memory-pages: 10, instance-pages: 20}\n",
			"memory-pages 10 is less than one instance (instance-pages 20)"},
		"unknown server key": {"listn: x\n", `unknown setting "listn"`},
		"bad rate":           {"rate-limit: 0\n", "setting rate-limit: must be positive"},
		"pipeline over the parser's limit": {"max-pipeline-bytes: 8388608\n",
			"setting max-pipeline-bytes: must be from 1024 to 4194304 (the pipeline parser's limit), got 8388608"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			file := write(t, t.TempDir(), "host.yaml", c.yaml)
			_, _, err := LoadServer(file, nil, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// TestServerKafka: the Kafka policy comes from the file, the environment
// (the password, a comma-separated broker list) and flags like every
// server setting, {tenant} stands for the tenant's name, relative TLS
// files are in the host config's folder, and a policy that cannot work
// is refused naming the setting.
func TestServerKafka(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "host.yaml", `kafka-brokers: [k1:9092, k2:9092]
kafka-sasl-mechanism: SCRAM-SHA-512
kafka-sasl-username: sluice
kafka-tls: true
kafka-tls-ca-file: /etc/kafka/ca.pem
kafka-tls-cert-file: client.pem
kafka-tls-key-file: client.key
`)
	flags := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	AddFlags(flags, ServerKeys...)
	if err := flags.Parse([]string{"--kafka-topic-prefix=team-{tenant}-"}); err != nil {
		t.Fatal(err)
	}
	_, ss, err := LoadServer(file, []string{"SLUICE_KAFKA_SASL_PASSWORD=s3cret"}, flags)
	if err != nil {
		t.Fatal(err)
	}
	k := ss.Kafka
	if strings.Join(k.Brokers, " ") != "k1:9092 k2:9092" || k.SASLMechanism != "SCRAM-SHA-512" || k.SASLUsername != "sluice" ||
		k.SASLPassword != "s3cret" || !k.TLS || k.TLSCAFile != "/etc/kafka/ca.pem" || k.TLSCertFile != filepath.Join(dir, "client.pem") || k.TLSKeyFile != filepath.Join(dir, "client.key") || k.TenantPrefix("acme") != "team-acme-" {
		t.Errorf("kafka settings %+v (prefix of acme %q)", k, k.TenantPrefix("acme"))
	}
	_, ss, err = LoadServer("", []string{"SLUICE_KAFKA_BROKERS=a:1,b:2"}, nil)
	if err != nil || strings.Join(ss.Kafka.Brokers, " ") != "a:1 b:2" || ss.Kafka.TenantPrefix("x") != "x." {
		t.Errorf("brokers from the environment: %q, prefix %q, %v", ss.Kafka.Brokers, ss.Kafka.TenantPrefix("x"), err)
	}
	for env, want := range map[string]string{
		"SLUICE_KAFKA_BROKERS=nohost":        `setting kafka-brokers: "nohost" is not host:port`,
		"SLUICE_KAFKA_SASL_MECHANISM=GSSAPI": `setting kafka-sasl-mechanism: "GSSAPI" is not one of`,
		"SLUICE_KAFKA_SASL_USERNAME=u":       "setting kafka-sasl-mechanism: is required with kafka-sasl-username",
		"SLUICE_KAFKA_TLS_CA_FILE=ca.pem":    "setting kafka-tls: must be true with kafka-tls-ca-file",
		"SLUICE_KAFKA_TLS=true":              "setting kafka-brokers: is required with kafka-sasl-* or kafka-tls",
		"SLUICE_KAFKA_TOPIC_PREFIX={team}.":  "setting kafka-topic-prefix: \"{team}.\": only {tenant} may stand in braces",
		"SLUICE_KAFKA_TLS_CERT_FILE=c.pem":   "kafka-tls-cert-file and kafka-tls-key-file go together",
	} {
		_, _, err := LoadServer("", []string{env}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", env, err, want)
		}
	}
}
