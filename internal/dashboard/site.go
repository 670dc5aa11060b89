package dashboard

import (
	"bytes"
	"fmt"
	"html"
	"io/fs"
	"net/url"
)

// File is one object of the deployed site.
type File struct {
	Key         string
	ContentType string
	Body        []byte
}

// Site is every file the dashboard's bucket holds for an API at apiURL
// (https://{api}.execute-api.{region}.amazonaws.com/{stage}/api): the
// embedded files, config.json naming apiURL, and index.html narrowed to
// that API. The distribution's CSP lets the dashboard connect to any API
// Gateway API of the region (the template cannot name the API there
// without a circular dependency, since the API's CORS names the
// distribution); index.html carries a second policy, a <meta> whose
// connect-src is the API's origin alone, and a browser enforces both.
func Site(apiURL string) ([]File, error) {
	u, err := url.Parse(apiURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the API's URL %q is not an https URL", apiURL)
	}
	var files []File
	for _, name := range Names() {
		b, err := fs.ReadFile(Files(), name)
		if err != nil {
			return nil, err
		}
		if name == "index.html" {
			if b, err = narrow(b, "'self' "+u.Scheme+"://"+u.Host); err != nil {
				return nil, err
			}
		}
		files = append(files, File{Key: name, ContentType: ContentType(name), Body: b})
	}
	return append(files, File{Key: ConfigName, ContentType: ContentType(ConfigName), Body: Config(apiURL)}), nil
}

// narrow puts a CSP <meta> with connect-src connect first in index.html's
// head, before anything it loads.
func narrow(index []byte, connect string) ([]byte, error) {
	head := []byte("<head>\n")
	i := bytes.Index(index, head)
	if i < 0 {
		return nil, fmt.Errorf("index.html has no <head>")
	}
	meta := `<meta http-equiv="Content-Security-Policy" content="` + html.EscapeString("connect-src "+connect) + "\">\n"
	return append(append(append([]byte{}, index[:i+len(head)]...), meta...), index[i+len(head):]...), nil
}
