package web

import (
	"context"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/host/server"
)

type principalKey struct{}

// principal is the authenticated caller of a request that went through
// authenticated.
func principal(r *http.Request) server.Principal {
	p, _ := r.Context().Value(principalKey{}).(server.Principal)
	return p
}

// authenticated runs next for requests with a valid bearer token that are
// within their tenant's rate limit; it answers 401 and 429 itself.
func (h *Handler) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		scheme, token, _ := strings.Cut(auth, " ")
		if auth == "" || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
			writeError(w, http.StatusUnauthorized, "Authorization header", "authentication required: send Authorization: Bearer <token>")
			return
		}
		p, ok := h.srv.Authenticate(strings.TrimSpace(token))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sluice", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "Authorization header", "the token is not valid for any tenant")
			return
		}
		if ok, wait := h.srv.Allow(p); !ok {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			writeError(w, http.StatusTooManyRequests, "rate limit", "%s: more than %g requests per second (burst %d): retry in %s",
				p, h.cfg.RateLimit, h.cfg.RateBurst, wait.Round(1e6))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// adminOnly runs next for the admin only; a tenant gets 403.
func adminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := principal(r); !p.Admin {
			writeError(w, http.StatusForbidden, r.URL.Path, "%s: only the admin token may read %s", p, r.URL.Path)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads a request body of at most limit bytes, the server
// setting named setting. A larger body is refused (413) before it is read
// when its length is declared, and as soon as the limit is passed
// otherwise.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, setting string) ([]byte, bool) {
	// A form (curl -F) wraps the file in boundaries and part headers: read
	// as YAML or wasm they gave a riddle ("mapping values are not allowed",
	// "starts with --------"). Say what to send instead.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && strings.HasPrefix(mt, "multipart/") {
		writeError(w, http.StatusUnsupportedMediaType, "request body",
			"the body is a %s form (curl -F); send the file itself as the body: curl --data-binary @FILE", mt)
		return nil, false
	}
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, "request body",
			"the body is %d bytes, the limit is %d (server setting %s)", r.ContentLength, limit, setting)
		return nil, false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "request body",
			"the body is larger than the limit of %d bytes (server setting %s)", limit, setting)
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "request body", "reading the body: %v", err)
		return nil, false
	case len(b) == 0:
		writeError(w, http.StatusBadRequest, "request body", "the body is empty")
		return nil, false
	}
	return b, true
}
