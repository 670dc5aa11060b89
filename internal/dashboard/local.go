package dashboard

import (
	"bytes"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// Local serves the dashboard at the root of the local server, beside the
// API: GET and HEAD of the dashboard's files (/ is index.html) and of a
// config.json naming /api, with the security headers (connect-src 'self':
// the API shares the origin); every other request goes to api.
func Local(api http.Handler) http.Handler {
	files := map[string][]byte{"/" + ConfigName: Config("/api")}
	for _, name := range Names() {
		b, err := fs.ReadFile(Files(), name)
		if err != nil {
			panic(err) // embedded: readable
		}
		files["/"+name] = b
	}
	files["/"] = files["/index.html"]
	headers := Headers("'self'")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok || r.Method != http.MethodGet && r.Method != http.MethodHead {
			api.ServeHTTP(w, r)
			return
		}
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", HSTS)
		}
		name := r.URL.Path
		if strings.HasSuffix(name, "/") {
			name += "index.html"
		}
		w.Header().Set("Content-Type", ContentType(name))
		w.Header().Set("Cache-Control", CacheControl)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	})
}
