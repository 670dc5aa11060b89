package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/egress"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		ip   string
		want egress.Kind
	}{
		{"127.0.0.1", egress.Loopback},
		{"127.200.0.9", egress.Loopback},
		{"::1", egress.Loopback},
		{"10.0.0.1", egress.Private},
		{"172.16.0.1", egress.Private},
		{"172.31.255.255", egress.Private},
		{"192.168.1.10", egress.Private},
		{"100.64.0.1", egress.Private},
		{"100.127.255.254", egress.Private},
		{"169.254.1.1", egress.LinkLocal},
		{"fe80::1", egress.LinkLocal},
		{"fe80::1%eth0", egress.LinkLocal},
		{"fec0::1", egress.LinkLocal},
		{"169.254.169.254", egress.Metadata},
		{"fd00:ec2::254", egress.Metadata},
		{"100.100.100.200", egress.Metadata},
		{"fd12:3456::1", egress.UniqueLocal},
		{"fc00::1", egress.UniqueLocal},
		{"224.0.0.1", egress.Multicast},
		{"239.255.255.250", egress.Multicast},
		{"ff02::1", egress.Multicast},
		{"0.0.0.0", egress.Unspecified},
		{"::", egress.Unspecified},
		{"0.1.2.3", egress.Reserved},
		{"255.255.255.255", egress.Reserved},
		{"240.0.0.1", egress.Reserved},
		{"198.18.0.1", egress.Reserved},
		{"::7f00:1", egress.Reserved},
		{"100::1", egress.Reserved},
		{"64:ff9b:1:808:8:800::", egress.Reserved}, // local-use NAT64 of 8.8.8.8
		// IPv4 inside IPv6: the kind of the IPv4 address.
		{"::ffff:127.0.0.1", egress.Loopback},
		{"::ffff:10.1.2.3", egress.Private},
		{"::ffff:169.254.169.254", egress.Metadata},
		{"::ffff:100.100.100.200", egress.Metadata},
		{"64:ff9b::7f00:1", egress.Loopback},
		{"64:ff9b::a9fe:a9fe", egress.Metadata},
		{"2002:c0a8:0101::1", egress.Private},
		{"2002:7f00:0001::", egress.Loopback},
		// Public, some just outside a refused range.
		{"93.184.216.34", egress.Public},
		{"8.8.8.8", egress.Public},
		{"172.32.0.1", egress.Public},
		{"172.15.255.255", egress.Public},
		{"100.128.0.1", egress.Public},
		{"169.255.0.1", egress.Public},
		{"::ffff:8.8.8.8", egress.Public},
		{"64:ff9b::808:808", egress.Public},
		{"2606:4700:4700::1111", egress.Public},
	}
	for _, c := range cases {
		if got := egress.Classify(netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("Classify(%s) = %s, want %s", c.ip, got, c.want)
		}
	}
}

func TestAllowed(t *testing.T) {
	strict := egress.Policy{}
	local := egress.Policy{LoopbackHTTP: true}
	private := egress.Policy{Private: true}
	cases := []struct {
		ip                     string
		strict, local, private bool
	}{
		{"93.184.216.34", true, true, true},
		{"127.0.0.1", false, true, false},
		{"::ffff:127.0.0.1", false, true, false},
		{"10.0.0.1", false, false, true},
		{"100.64.0.1", false, false, true},
		{"fd12::1", false, false, true},
		{"169.254.169.254", false, false, false},
		{"fd00:ec2::254", false, false, false},
		{"100.100.100.200", false, false, false},
		{"fe80::1", false, false, false},
		{"224.0.0.1", false, false, false},
		{"0.0.0.0", false, false, false},
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.ip)
		for _, p := range []struct {
			name   string
			policy egress.Policy
			want   bool
		}{{"strict", strict, c.strict}, {"loopback", local, c.local}, {"private", private, c.private}} {
			err := p.policy.Allowed(ip)
			if (err == nil) != p.want {
				t.Errorf("%s policy, %s: err %v, want allowed %v", p.name, c.ip, err, p.want)
			}
			if err != nil && !errors.Is(err, egress.ErrRefused) {
				t.Errorf("%s policy, %s: %v does not wrap ErrRefused", p.name, c.ip, err)
			}
		}
	}
}

func TestCheckURL(t *testing.T) {
	local := egress.Policy{LoopbackHTTP: true}
	cases := []struct {
		url    string
		policy egress.Policy
		want   string // "" for accepted, else a part of the error
	}{
		{"https://hooks.example.com/scangate?x=1", egress.Policy{}, ""},
		{"https://hooks.example.com:8443/", egress.Policy{}, ""},
		{"https://93.184.216.34/hook", egress.Policy{}, ""},
		{"http://hooks.example.com/", egress.Policy{}, "must use https"},
		{"http://hooks.example.com/", local, "must use https"},
		{"http://127.0.0.1:8080/hook", egress.Policy{}, "must use https"},
		{"http://127.0.0.1:8080/hook", local, ""},
		{"http://[::1]:8080/hook", local, ""},
		{"http://localhost:8080/hook", local, ""},
		{"http://10.0.0.1/hook", local, "must use https"},
		{"ftp://hooks.example.com/", egress.Policy{}, "must use https"},
		{"hooks.example.com/x", egress.Policy{}, "absolute URL"},
		{"/hook", egress.Policy{}, "absolute URL"},
		{"https:///hook", egress.Policy{}, "must name a host"},
		{"https://user:pw@hooks.example.com/", egress.Policy{}, "user name or password"},
		{"https://token@hooks.example.com/", egress.Policy{}, "user name or password"},
		{"https://127.0.0.1/", egress.Policy{}, "127.0.0.1 is a loopback address"},
		{"https://localhost/", egress.Policy{}, "loopback name"},
		{"https://api.localhost/", egress.Policy{}, "loopback name"},
		{"https://10.1.2.3/", egress.Policy{}, "10.1.2.3 is a private address"},
		{"https://192.168.0.1/", egress.Policy{}, "private address"},
		{"https://169.254.10.1/", egress.Policy{}, "link-local address"},
		{"https://169.254.169.254/latest/meta-data/", egress.Policy{}, "cloud metadata address"},
		{"https://169.254.169.254/", egress.Policy{Private: true, LoopbackHTTP: true}, "cloud metadata address"},
		{"https://[fd00:ec2::254]/", egress.Policy{Private: true}, "cloud metadata address"},
		{"https://100.100.100.200/", egress.Policy{Private: true}, "cloud metadata address"},
		{"https://[fd12:3456::1]/", egress.Policy{}, "unique-local address"},
		{"https://[fe80::1%25eth0]/", egress.Policy{}, "link-local address"},
		{"https://[::ffff:127.0.0.1]/", egress.Policy{}, "loopback address"},
		{"https://[::ffff:169.254.169.254]/", egress.Policy{}, "cloud metadata address"},
		{"https://0.0.0.0/", egress.Policy{}, "unspecified address"},
		{"https://224.0.0.1/", egress.Policy{}, "multicast address"},
		{"https://hooks.example.com/" + strings.Repeat("a", egress.MaxURL), egress.Policy{}, "at most 2048 bytes"},
		{"https://hooks.example.com:65535/", egress.Policy{}, ""},
		{"https://hooks.example.com:1/", egress.Policy{}, ""},
		{"https://hooks.example.com:/", egress.Policy{}, ""},
		{"https://hooks.example.com:0/", egress.Policy{}, "port must be 1 to 65535"},
		{"https://hooks.example.com:65536/", egress.Policy{}, "port must be 1 to 65535"},
		{"https://hooks.example.com:99999/", egress.Policy{}, "port must be 1 to 65535"},
		{"https://hooks.example.com:00443/", egress.Policy{}, ""},
		{"https://hooks.example.com:99999999999999999999/", egress.Policy{}, "port must be 1 to 65535"},
		{"http://127.0.0.1:70000/hook", local, "port must be 1 to 65535"},
	}
	for _, c := range cases {
		_, err := c.policy.CheckURL(c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckURL(%q): %v, want accepted", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckURL(%q): %v, want an error with %q", c.url, err, c.want)
		case err != nil && !errors.Is(err, egress.ErrRefused):
			t.Errorf("CheckURL(%q): %v does not wrap ErrRefused", c.url, err)
		}
	}
}

// resolver answers names from a table; a name may have a list of answers,
// given one after the other (the last one stays), as a rebinding DNS
// server would.
type resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	asked   int
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	list := r.answers[host]
	if len(list) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	a := list[0]
	if len(list) > 1 {
		r.answers[host] = list[1:]
	}
	return a, nil
}

func addrs(s ...string) []netip.Addr {
	var a []netip.Addr
	for _, x := range s {
		a = append(a, netip.MustParseAddr(x))
	}
	return a
}

// counting is a local server that counts the requests it receives.
func counting(t *testing.T, tls bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &n
}

// trusting returns the policy's client trusting the test server's certificate.
func trusting(p egress.Policy, srv *httptest.Server) *http.Client {
	c := p.Client(5 * time.Second)
	c.Transport.(*http.Transport).TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	return c
}

// A name that resolves to a public address when it is subscribed, and to
// 127.0.0.1 when the delivery is made, is refused when the connection is
// made: the receiver listening there sees nothing.
func TestDNSRebindingIsRefusedAtConnect(t *testing.T) {
	srv, seen := counting(t, true)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	target := "https://hooks.example.com:" + strconv.Itoa(port) + "/hook"

	r := &resolver{answers: map[string][][]netip.Addr{
		"hooks.example.com": {addrs("93.184.216.34"), addrs("127.0.0.1")},
	}}
	strict := egress.Policy{Resolver: r}
	u, err := strict.CheckURL(target)
	if err != nil {
		t.Fatalf("subscribe: CheckURL: %v", err)
	}
	if err := strict.CheckName(context.Background(), u); err != nil {
		t.Fatalf("subscribe: CheckName with a public answer: %v", err)
	}

	_, err = trusting(strict, srv).Post(target, "application/json", strings.NewReader(`{}`))
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "127.0.0.1 is a loopback address") {
		t.Fatalf("delivery after rebinding: err %v, want the loopback address refused", err)
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the receiver on 127.0.0.1 got %d requests", n)
	}
	if r.asked != 2 {
		t.Fatalf("resolver asked %d times, want 2 (subscribe, delivery)", r.asked)
	}

	// The same request reaches the receiver where loopback is allowed: what
	// refused it above was the address rule, not the test's set-up.
	r.answers["hooks.example.com"] = [][]netip.Addr{addrs("127.0.0.1")}
	resp, err := trusting(egress.Policy{Resolver: r, LoopbackHTTP: true}, srv).Post(target, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("with loopback allowed: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || seen.Load() != 1 {
		t.Fatalf("with loopback allowed: status %d, %d requests seen", resp.StatusCode, seen.Load())
	}
}

// Every kind of refused address is refused when dialled, whatever the name
// that led to it, and the refusal happens before connecting.
func TestConnectRefusesEachKind(t *testing.T) {
	srv, seen := counting(t, false)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	cases := map[string]string{
		"loopback.example.com":    "127.0.0.1",
		"mapped.example.com":      "::ffff:127.0.0.1",
		"rfc1918.example.com":     "10.0.0.8",
		"home.example.com":        "192.168.1.1",
		"cgnat.example.com":       "100.64.0.9",
		"linklocal.example.com":   "169.254.0.7",
		"metadata.example.com":    "169.254.169.254",
		"metadata6.example.com":   "fd00:ec2::254",
		"alibaba.example.com":     "100.100.100.200",
		"ula.example.com":         "fd12:3456::1",
		"mapped-md.example.com":   "::ffff:169.254.169.254",
		"multicast.example.com":   "224.0.0.251",
		"unspecified.example.com": "0.0.0.0",
		"testnet.example.com":     "192.0.2.1",
		"relay.example.com":       "192.88.99.1",
		"doc6.example.com":        "3fff::1",
		"srv6.example.com":        "5f00::1",
		"teredo.example.com":      "2001:0:4136:e378:8000:63bf:3fff:fdfe",
		"translated.example.com":  "::ffff:0:a9fe:a9fe",
	}
	r := &resolver{answers: map[string][][]netip.Addr{}}
	for name, ip := range cases {
		r.answers[name] = [][]netip.Addr{addrs(ip)}
	}
	c := egress.Policy{Resolver: r}.Client(5 * time.Second)
	for name, ip := range cases {
		_, err := c.Get("http://" + name + ":" + port + "/")
		var refusal *egress.RefusedError
		if !errors.As(err, &refusal) || !strings.Contains(refusal.Reason, netip.MustParseAddr(ip).Unmap().String()) {
			t.Errorf("%s (%s): err %v, want the address refused", name, ip, err)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the server got %d requests", n)
	}
}

// The Control function itself refuses: a plain net.Dialer given it cannot
// connect to a loopback listener.
func TestControlRefusesBeforeConnecting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	d := net.Dialer{Control: egress.Policy{}.Control}
	if _, err := d.Dial("tcp", ln.Addr().String()); !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("dial loopback through Control: %v, want refused", err)
	}
	for _, a := range []string{"169.254.169.254:80", "[fd00:ec2::254]:80", "[fe80::1%lo]:80", "10.0.0.1:443", "[::ffff:127.0.0.1]:80"} {
		if err := (egress.Policy{Private: true}).Control("tcp", a, nil); a != "10.0.0.1:443" && !errors.Is(err, egress.ErrRefused) {
			t.Errorf("Control(%s) with private allowed: %v, want refused", a, err)
		} else if a == "10.0.0.1:443" && err != nil {
			t.Errorf("Control(%s) with private allowed: %v", a, err)
		}
	}
}

// CheckName refuses, at subscribe time, a name that resolves to a refused
// address, and lets pass a name that does not resolve (yet).
func TestCheckName(t *testing.T) {
	r := &resolver{answers: map[string][][]netip.Addr{
		"internal.example.com": {addrs("93.184.216.34", "10.0.0.5")},
		"public.example.com":   {addrs("93.184.216.34")},
	}}
	p := egress.Policy{Resolver: r}
	check := func(raw string) error {
		u, err := p.CheckURL(raw)
		if err != nil {
			t.Fatalf("CheckURL(%s): %v", raw, err)
		}
		return p.CheckName(context.Background(), u)
	}
	if err := check("https://internal.example.com/"); err == nil || !strings.Contains(err.Error(), "internal.example.com resolves to 10.0.0.5 is a private address") {
		t.Errorf("a name with a private address: %v", err)
	}
	if err := check("https://public.example.com/"); err != nil {
		t.Errorf("a public name: %v", err)
	}
	if err := check("https://unknown.example.com/"); err != nil {
		t.Errorf("a name that does not resolve: %v", err)
	}
}

// A redirect is the answer, not followed; the environment's proxy is never
// used.
func TestClientFollowsNoRedirectAndUsesNoProxy(t *testing.T) {
	var elsewhere atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := egress.Policy{LoopbackHTTP: true}.Client(5 * time.Second)
	resp, err := c.Post(srv.URL+"/hook", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusFound || elsewhere.Load() != 0 {
		t.Fatalf("status %d, %d requests followed the redirect", resp.StatusCode, elsewhere.Load())
	}
	if c.Transport.(*http.Transport).Proxy != nil {
		t.Fatal("the transport has a proxy function")
	}
}

// An API's root (an integration's api_url) holds no query or fragment,
// not even an empty one, besides what CheckURL refuses.
func TestCheckAPIURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.github.com":                 "",
		"https://ghe.example.com/api/v3/":        "",
		"https://gitlab.example.com:8443/api/v4": "",
		"https://ghe.example.com/api/v3?x=1":     "query or a fragment",
		"https://ghe.example.com/api/v3?":        "query or a fragment",
		"https://ghe.example.com/api/v3#f":       "query or a fragment",
		"https://ghe.example.com/api/v3#":        "query or a fragment",
		"https://user:pw@ghe.example.com/api/v3": "user name or password",
		"https://user@ghe.example.com/api/v3":    "user name or password",
		"http://ghe.example.com/api/v3":          "must use https",
		"https://192.0.2.10/api/v3":              "documentation address",
	} {
		_, err := egress.Policy{}.CheckAPIURL(raw)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
