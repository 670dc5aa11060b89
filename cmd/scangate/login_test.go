package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const loginToken = "sgt_9_login-token"

// loginAPI answers POST /api/auth/token for admin with password
// "a chosen $password-1" and notes what it was sent.
func loginAPI(t *testing.T) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var sent []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
		var in struct{ Username, Password string }
		if r.Method != http.MethodPost || r.URL.Path != "/api/auth/token" || json.Unmarshal(b, &in) != nil {
			problem(w, 404, "no such route")
			return
		}
		if in.Username != "admin" || in.Password != "a chosen $password-1" {
			problem(w, 401, "the username or the password is wrong")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":43200}`, loginToken)
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// scangate login: the password from standard input (not a terminal),
// never from a flag; the token alone on standard output, for a pipe; no
// token sent; errors on standard error.
func TestLogin(t *testing.T) {
	srv, sent := loginAPI(t)
	c := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api"}, stdin: "a chosen $password-1\n"}
	code, out, errOut := c.run(t, "login", "--username", "admin")
	if code != exitOK || out != loginToken+"\n" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if len(*sent) != 1 || !strings.Contains((*sent)[0], "Authorization= ") {
		t.Errorf("sent %v", *sent)
	}
	// A token in the environment is not sent with a login.
	c.env["SCANGATE_TOKEN"] = "sgt_1_other"
	if code, out, _ := c.run(t, "login", "--username", "admin"); code != exitOK || out != loginToken+"\n" || strings.Contains((*sent)[1], "sgt_1_other") {
		t.Errorf("with SCANGATE_TOKEN: exit %d %q %v", code, out, (*sent)[1])
	}
	// A wrong password: exit 2, the service's words on standard error,
	// nothing on standard output, and never the password.
	c.stdin = "wrong-password\n"
	code, out, errOut = c.run(t, "login", "--username", "admin")
	if code != exitError || out != "" || !strings.Contains(errOut, "401 Unauthorized: the username or the password is wrong") || strings.Contains(errOut, "wrong-password") {
		t.Errorf("wrong password: exit %d %q %q", code, out, errOut)
	}
	// No password on standard input; no --password flag at all.
	c.stdin = ""
	if code, out, errOut := c.run(t, "login", "--username", "admin"); code != exitError || out != "" || !strings.Contains(errOut, "no password") {
		t.Errorf("no password: exit %d %q %q", code, out, errOut)
	}
	if code, _, errOut := c.run(t, "login", "--username", "admin", "--password", "x"); code != exitError || !strings.Contains(errOut, "flag provided but not defined: -password") {
		t.Errorf("--password: exit %d %q", code, errOut)
	}
	// On a terminal, the password is read without echo, after a prompt on
	// standard error.
	c.stdin, c.terminal = "", true
	c.password = "a chosen $password-1"
	code, out, errOut = c.run(t, "login", "--username", "admin")
	if code != exitOK || out != loginToken+"\n" || errOut != "password for admin at "+srv.URL+"/api: \n" {
		t.Errorf("terminal: exit %d %q %q", code, out, errOut)
	}
}
