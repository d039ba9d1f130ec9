package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// Principal is who makes a request: a tenant, or the admin (who sees and
// cancels every tenant's jobs and plugins but submits nothing).
type Principal struct {
	Tenant string // "" for the admin
	Admin  bool
}

// String names the principal in errors and logs.
func (p Principal) String() string {
	if p.Admin {
		return "admin"
	}
	return "tenant " + p.Tenant
}

// credential is one accepted token, by its hash.
type credential struct {
	hash [sha256.Size]byte
	who  Principal
}

// HashToken returns the hex SHA-256 of token: what a host config stores
// as token-sha256 (the token itself is never stored).
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func decodeHash(s string) ([sha256.Size]byte, bool) {
	var h [sha256.Size]byte
	b, err := hex.DecodeString(strings.ToLower(s))
	if err != nil || len(b) != sha256.Size {
		return h, false
	}
	copy(h[:], b)
	return h, true
}

// Authenticate returns the principal whose token this is. The token's
// hash is compared with every configured hash in constant time, and the
// loop never stops early, so the time taken says nothing about which
// tenant (if any) nearly matched.
func (s *Server) Authenticate(token string) (Principal, bool) {
	if token == "" {
		return Principal{}, false
	}
	sum := sha256.Sum256([]byte(token))
	var who Principal
	found := 0
	for i := range s.creds {
		eq := subtle.ConstantTimeCompare(sum[:], s.creds[i].hash[:])
		if eq == 1 {
			who = s.creds[i].who
		}
		found |= eq
	}
	return who, found == 1
}
