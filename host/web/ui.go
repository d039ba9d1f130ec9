package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// The dashboard: one HTML page, a style sheet and a script, embedded in
// the binary. No CDN, no build step: plain JavaScript that draws the job
// graph in SVG and polls the API every second.
//
//go:embed assets
var assets embed.FS

func dashboard() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix("/ui/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}
