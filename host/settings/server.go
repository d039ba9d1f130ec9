package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/sluicehq/sluice/host/pipeline"
)

// Server holds the settings of `host serve`, flat like Settings: listen,
// --listen, SLUICE_LISTEN. Tenants come from the host config file
// (tenants:, a list) or from the file tenants-file names; the environment
// and flags can only name the file.
type Server struct {
	Listen string `mapstructure:"listen"` // address of the HTTP API and dashboard
	// TenantsFile is a YAML file holding `tenants:` (and optionally
	// admin-token-sha256); relative to the host config file's folder.
	TenantsFile      string `mapstructure:"tenants-file"`
	AdminTokenSHA256 string `mapstructure:"admin-token-sha256"` // hex SHA-256 of the admin token; "" : no admin
	MaxRequestBytes  int64  `mapstructure:"max-request-bytes"`  // largest request body but a pipeline's: a plugin upload
	// MaxPipelineBytes is the largest pipeline a tenant may submit, at
	// most the parser's own limit (pipeline.DefaultMaxBytes). Parsing
	// costs about 30 times the file in memory, so the server's default is
	// a quarter of the parser's.
	MaxPipelineBytes int           `mapstructure:"max-pipeline-bytes"`
	RateLimit        float64       `mapstructure:"rate-limit"`     // requests per second per tenant (token bucket)
	RateBurst        int           `mapstructure:"rate-burst"`     // bucket size
	DrainTimeout     time.Duration `mapstructure:"drain-timeout"`  // how long shutdown lets running jobs end by themselves
	OutputRecords    int           `mapstructure:"output-records"` // records a collect sink keeps per job
	OutputBytes      int           `mapstructure:"output-bytes"`   // bytes a collect sink keeps per job
	JobHistory       int           `mapstructure:"job-history"`    // ended jobs kept per tenant

	// Kafka offers the kafka source and sink to tenants: see ServerKafka.
	Kafka ServerKafka `mapstructure:",squash"`

	// Tenants are the tenants the server admits, from the file or the
	// tenants-file. Never set from the environment or a flag.
	Tenants []Tenant `mapstructure:"-"`
}

// Tenant is one tenant: its name, the SHA-256 of its API token (the token
// itself is never stored) and its quotas.
type Tenant struct {
	Name        string
	TokenSHA256 string // 64 hex digits
	// Quotas over the tenant's running jobs.
	Slots       int   // task slots
	MemoryPages int64 // plugin instances × instance pages, summed
	RunningJobs int
	// Quotas on stored plugins.
	PluginBytes int // largest plugin module
	Plugins     int // plugins stored
	// Limits of each plugin instance of the tenant's jobs.
	InstancePages uint32        // linear memory cap, 64 KiB pages; 0: the host's memory-pages
	CallTimeout   time.Duration // per call; 0: the host's call-timeout
	// FuelRate caps the fuel the tenant's plugins spend per second, over
	// all its jobs; 0: the host's fuel-rate.
	FuelRate int64
}

// ServerKeys lists the server's setting keys (tenants aside).
var ServerKeys = []string{"listen", "tenants-file", "admin-token-sha256", "max-request-bytes", "max-pipeline-bytes", "rate-limit",
	"rate-burst", "drain-timeout", "output-records", "output-bytes", "job-history",
	"kafka-brokers", "kafka-topic-prefix", "kafka-sasl-mechanism", "kafka-sasl-username", "kafka-sasl-password",
	"kafka-tls", "kafka-tls-ca-file", "kafka-tls-cert-file", "kafka-tls-key-file", "kafka-tls-server-name"}

// ServerKafka is the server's Kafka policy. With no brokers tenants get
// no Kafka. With brokers, a tenant's kafka source or sink may name only
// these brokers, reaches them with the server's credentials (a tenant's
// own sasl or tls is refused: it would read the host's files, or use
// credentials the platform team did not give), reads and writes only the
// topics (and commits only to the groups) whose names start with its
// TopicPrefix, and an exactly-once sink's transactional ids always carry
// the tenant and the job id, so no tenant fences another's producers.
type ServerKafka struct {
	// Brokers are the host:port addresses tenants may name (their
	// brokers option must be some of these); none: no Kafka for tenants.
	Brokers []string `mapstructure:"kafka-brokers"`
	// TopicPrefix is what every topic and group id of a tenant must start
	// with; {tenant} stands for the tenant's name. "" lets every tenant
	// use every topic.
	TopicPrefix   string `mapstructure:"kafka-topic-prefix"`
	SASLMechanism string `mapstructure:"kafka-sasl-mechanism"` // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; "": no SASL
	SASLUsername  string `mapstructure:"kafka-sasl-username"`
	SASLPassword  string `mapstructure:"kafka-sasl-password"` // SLUICE_KAFKA_SASL_PASSWORD keeps it out of the file
	// TLS encrypts the connections; the files are PEM (a CA file alone:
	// the system's roots are not used).
	TLS           bool   `mapstructure:"kafka-tls"`
	TLSCAFile     string `mapstructure:"kafka-tls-ca-file"`
	TLSCertFile   string `mapstructure:"kafka-tls-cert-file"`
	TLSKeyFile    string `mapstructure:"kafka-tls-key-file"`
	TLSServerName string `mapstructure:"kafka-tls-server-name"`
}

// TenantPrefix is the prefix tenant's topics and group ids must have.
func (k ServerKafka) TenantPrefix(tenant string) string {
	return strings.ReplaceAll(k.TopicPrefix, "{tenant}", tenant)
}

func (k ServerKafka) validate(check func(ok bool, key, format string, args ...any)) {
	for _, b := range k.Brokers {
		i := strings.LastIndexByte(b, ':')
		check(i > 0 && i < len(b)-1 && strings.TrimSpace(b) == b, "kafka-brokers", "%q is not host:port", b)
	}
	switch k.SASLMechanism {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		check(false, "kafka-sasl-mechanism", "%q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", k.SASLMechanism)
	}
	check(k.SASLMechanism == "" || k.SASLUsername != "", "kafka-sasl-username", "is required with kafka-sasl-mechanism")
	check(k.SASLMechanism != "" || k.SASLUsername == "" && k.SASLPassword == "", "kafka-sasl-mechanism",
		"is required with kafka-sasl-username or kafka-sasl-password")
	check((k.TLSCertFile == "") == (k.TLSKeyFile == ""), "kafka-tls-cert-file", "kafka-tls-cert-file and kafka-tls-key-file go together")
	check(k.TLS || k.TLSCAFile == "" && k.TLSCertFile == "" && k.TLSServerName == "", "kafka-tls",
		"must be true with kafka-tls-ca-file, kafka-tls-cert-file or kafka-tls-server-name")
	check(len(k.Brokers) > 0 || k.SASLMechanism == "" && !k.TLS, "kafka-brokers",
		"is required with kafka-sasl-* or kafka-tls: the brokers tenants may use")
	check(!strings.ContainsAny(strings.ReplaceAll(k.TopicPrefix, "{tenant}", ""), "{}"), "kafka-topic-prefix",
		"%q: only {tenant} may stand in braces", k.TopicPrefix)
}

// DefaultServer returns the server settings used when nothing else is said.
func DefaultServer() Server {
	return Server{
		Listen:           "127.0.0.1:8080",
		MaxRequestBytes:  16 << 20,
		MaxPipelineBytes: 1 << 20,
		RateLimit:        20,
		RateBurst:        40,
		DrainTimeout:     10 * time.Second,
		OutputRecords:    1000,
		OutputBytes:      1 << 20,
		JobHistory:       50,
		Kafka:            ServerKafka{TopicPrefix: "{tenant}."},
	}
}

// DefaultTenant returns the quotas of a tenant whose entry leaves them out.
func DefaultTenant() Tenant {
	return Tenant{Slots: 4, MemoryPages: 4096, RunningJobs: 4, PluginBytes: 16 << 20, Plugins: 16}
}

func setServerDefaults(v *viper.Viper, s Server) {
	v.SetDefault("listen", s.Listen)
	v.SetDefault("tenants-file", s.TenantsFile)
	v.SetDefault("admin-token-sha256", s.AdminTokenSHA256)
	v.SetDefault("max-request-bytes", s.MaxRequestBytes)
	v.SetDefault("max-pipeline-bytes", s.MaxPipelineBytes)
	v.SetDefault("rate-limit", s.RateLimit)
	v.SetDefault("rate-burst", s.RateBurst)
	v.SetDefault("drain-timeout", s.DrainTimeout)
	v.SetDefault("output-records", s.OutputRecords)
	v.SetDefault("output-bytes", s.OutputBytes)
	v.SetDefault("job-history", s.JobHistory)
	k := s.Kafka
	v.SetDefault("kafka-brokers", k.Brokers)
	v.SetDefault("kafka-topic-prefix", k.TopicPrefix)
	v.SetDefault("kafka-sasl-mechanism", k.SASLMechanism)
	v.SetDefault("kafka-sasl-username", k.SASLUsername)
	v.SetDefault("kafka-sasl-password", k.SASLPassword)
	v.SetDefault("kafka-tls", k.TLS)
	v.SetDefault("kafka-tls-ca-file", k.TLSCAFile)
	v.SetDefault("kafka-tls-cert-file", k.TLSCertFile)
	v.SetDefault("kafka-tls-key-file", k.TLSKeyFile)
	v.SetDefault("kafka-tls-server-name", k.TLSServerName)
}

// LoadServer reads the host settings and the server settings from the
// same sources as Load (file, SLUICE_* environment, flags), then the
// tenants: inline in the file, or from tenants-file. Every problem is
// reported, naming the field.
func LoadServer(file string, env []string, flags *pflag.FlagSet) (Settings, Server, error) {
	v, from, err := read(file, env, flags)
	if err != nil {
		return Default(), DefaultServer(), err
	}
	s, err := unmarshal(v, from)
	if err != nil {
		return s, DefaultServer(), err
	}
	srv := DefaultServer()
	if err := v.Unmarshal(&srv); err != nil {
		return s, srv, decodeError("server settings", err, from)
	}
	where := "host settings"
	if file != "" {
		where = "host config " + file
		// the server's Kafka files, like tenants-file, are relative to
		// the host config's folder
		for _, f := range []*string{&srv.Kafka.TLSCAFile, &srv.Kafka.TLSCertFile, &srv.Kafka.TLSKeyFile} {
			if *f != "" && !filepath.IsAbs(*f) {
				*f = filepath.Join(filepath.Dir(file), *f)
			}
		}
	}
	if v.IsSet("tenants") {
		srv.Tenants, err = decodeTenants(v.Get("tenants"), where, s)
		if err != nil {
			return s, srv, err
		}
	}
	if srv.TenantsFile != "" {
		path := srv.TenantsFile
		if !filepath.IsAbs(path) && file != "" {
			path = filepath.Join(filepath.Dir(file), path)
		}
		if len(srv.Tenants) > 0 {
			return s, srv, fmt.Errorf("%s: tenants are given inline and in tenants-file %s: keep one", where, path)
		}
		if srv.Tenants, srv.AdminTokenSHA256, err = readTenantsFile(path, srv.AdminTokenSHA256, s); err != nil {
			return s, srv, err
		}
	}
	return s, srv, srv.Validate()
}

// readTenantsFile reads `tenants:` and optionally `admin-token-sha256:`
// from a YAML file; the file's admin hash wins over admin.
func readTenantsFile(path, admin string, s Settings) ([]Tenant, string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, admin, fmt.Errorf("tenants-file: %w", err)
	}
	v := viper.New()
	v.SetConfigFile(path)
	if err := v.ReadInConfig(); err != nil {
		return nil, admin, fmt.Errorf("tenants file %s: %w", path, err)
	}
	for _, k := range v.AllKeys() {
		if k != "tenants" && k != "admin-token-sha256" {
			return nil, admin, fmt.Errorf("tenants file %s: unknown key %q (known: tenants, admin-token-sha256)", path, k)
		}
	}
	if v.IsSet("admin-token-sha256") {
		admin = v.GetString("admin-token-sha256")
	}
	ts, err := decodeTenants(v.Get("tenants"), "tenants file "+path, s)
	return ts, admin, err
}

// Validate checks the server settings and every tenant, naming each
// problem.
func (s Server) Validate() error {
	var errs []error
	check := func(ok bool, key, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("setting %s: "+format, append([]any{key}, args...)...))
		}
	}
	check(s.Listen != "", "listen", "must name an address such as 127.0.0.1:8080")
	check(s.AdminTokenSHA256 == "" || isSHA256Hex(s.AdminTokenSHA256), "admin-token-sha256",
		"must be 64 hex digits (the SHA-256 of the token; `host serve token` makes one)")
	check(s.MaxRequestBytes >= 1024, "max-request-bytes", "must be at least 1024, got %d", s.MaxRequestBytes)
	check(s.MaxPipelineBytes >= 1024 && s.MaxPipelineBytes <= pipeline.DefaultMaxBytes, "max-pipeline-bytes",
		"must be from 1024 to %d (the pipeline parser's limit), got %d", pipeline.DefaultMaxBytes, s.MaxPipelineBytes)
	check(s.RateLimit > 0, "rate-limit", "must be positive (requests per second per tenant), got %g", s.RateLimit)
	check(s.RateBurst >= 1, "rate-burst", "must be at least 1, got %d", s.RateBurst)
	check(s.DrainTimeout >= 0, "drain-timeout", "must not be negative, got %s", s.DrainTimeout)
	check(s.OutputRecords >= 1, "output-records", "must be at least 1, got %d", s.OutputRecords)
	check(s.OutputBytes >= 1024, "output-bytes", "must be at least 1024, got %d", s.OutputBytes)
	check(s.JobHistory >= 0, "job-history", "must not be negative, got %d", s.JobHistory)
	s.Kafka.validate(check)
	names := map[string]bool{}
	hashes := map[string]string{}
	if s.AdminTokenSHA256 != "" {
		hashes[s.AdminTokenSHA256] = "the admin"
	}
	for i, t := range s.Tenants {
		if names[t.Name] {
			errs = append(errs, fmt.Errorf("tenants[%d]: tenant %q is listed twice", i, t.Name))
		}
		names[t.Name] = true
		if other, ok := hashes[t.TokenSHA256]; ok && t.TokenSHA256 != "" {
			errs = append(errs, fmt.Errorf("tenants[%d] (%s): token-sha256 is also %s's: every tenant needs its own token", i, t.Name, other))
		}
		hashes[t.TokenSHA256] = "tenant " + t.Name
		if !tenantName.MatchString(t.Name) || !isSHA256Hex(t.TokenSHA256) {
			errs = append(errs, fmt.Errorf("tenants[%d] %q: needs a name of lower-case letters, digits, _ and - and a token-sha256 of 64 hex digits", i, t.Name))
		}
		if t.Slots < 1 || t.MemoryPages < 1 || t.RunningJobs < 1 || t.PluginBytes < 1 || t.Plugins < 1 {
			errs = append(errs, fmt.Errorf("tenants[%d] %s: slots, memory-pages, running-jobs, plugin-bytes and plugins must be at least 1 (got %d, %d, %d, %d, %d)",
				i, t.Name, t.Slots, t.MemoryPages, t.RunningJobs, t.PluginBytes, t.Plugins))
		}
	}
	return errors.Join(errs...)
}
