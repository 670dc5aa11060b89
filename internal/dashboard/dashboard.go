// Package dashboard is the web dashboard: static files (plain ES modules
// and CSS, no build step) embedded in the binaries that serve or publish
// them, the security headers every one of them is served with, and the
// config.json that tells the dashboard where the API is. The local command
// serves them beside the local API (Local); on AWS a custom resource's
// function writes them into a bucket behind CloudFront (Site, Publisher).
package dashboard

import (
	"embed"
	"encoding/json"
	"io/fs"
	"mime"
	"path"
	"sort"
)

//go:embed assets
var assets embed.FS

// Files are the dashboard's static files, at the root of the site.
func Files() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory exists: a build without it fails
	}
	return sub
}

// Names lists the files of Files(), sorted.
func Names() []string {
	var names []string
	_ = fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	sort.Strings(names)
	return names
}

// ConfigName is the file that names the API: written beside the others,
// never embedded, since it differs per deployment.
const ConfigName = "config.json"

// Config is config.json for an API at apiURL (a base URL ending in /api,
// or the path /api when the API shares the dashboard's origin).
func Config(apiURL string) []byte {
	b, _ := json.Marshal(struct {
		APIURL string `json:"api_url"`
	}{apiURL})
	return b
}

// ContentType is the type a file is served with, from its extension.
func ContentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// CacheControl is how every file is cached: the names carry no version
// (there is no build step to hash them), so a browser or CloudFront keeps
// a file but asks whether it changed before using it again.
const CacheControl = "no-cache"
