package server

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/settings"
)

// Tokens of the test tenants; their hashes are in the config.
const (
	tokenA     = "token-of-tenant-a"
	tokenB     = "token-of-tenant-b"
	tokenAdmin = "token-of-the-admin"
)

var (
	tenantA = Principal{Tenant: "a"}
	tenantB = Principal{Tenant: "b"}
	admin   = Principal{Admin: true}
)

// testConfig has tenants a and b (4 slots, 2 running jobs, 3 plugins
// each) and an admin.
func testConfig(t *testing.T) Config {
	hs := settings.Default()
	hs.CacheDir = ""
	ss := settings.DefaultServer()
	ss.AdminTokenSHA256 = HashToken(tokenAdmin)
	for _, tn := range []struct{ name, token string }{{"a", tokenA}, {"b", tokenB}} {
		tc := settings.DefaultTenant()
		tc.Name, tc.TokenSHA256 = tn.name, HashToken(tn.token)
		tc.Slots, tc.RunningJobs, tc.Plugins = 4, 2, 3
		tc.InstancePages, tc.MemoryPages, tc.CallTimeout = 256, 1024, 5*time.Second
		ss.Tenants = append(ss.Tenants, tc)
	}
	return Config{Host: hs, Server: ss}
}

func newTestServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.cfg.Server.DrainTimeout = 0
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

// waitEnded waits until the job ended (the test's deadline bounds it).
func waitEnded(t *testing.T, s *Server, p Principal, id string) JobStatus {
	t.Helper()
	st, err := s.Wait(p, id, t.Context().Done())
	if err != nil {
		t.Fatal(err)
	}
	return st
}
