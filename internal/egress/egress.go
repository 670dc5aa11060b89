// Package egress holds the rules for the requests scangate sends out of its
// own network: webhook deliveries and commit statuses. A URL must be https
// and carry no credentials; a connection may reach only a public address,
// never a private, loopback, link-local, multicast, unique-local, cloud
// metadata or other special-purpose one (the IANA registries' ranges that
// are not globally reachable: see specials). The address is checked when the connection is made (a
// net.Dialer Control function sees the address being dialled), so a name
// that resolved to a public address when it was subscribed and to a
// private one later (DNS rebinding) still cannot reach it.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Policy says which destinations outbound requests may reach beyond the
// public internet. The zero Policy is the strict one.
type Policy struct {
	// LoopbackHTTP allows http URLs to a loopback host (127.0.0.0/8, ::1,
	// localhost) and connections to loopback addresses: local receivers on
	// a developer's machine and in tests. Off in the deployed template.
	LoopbackHTTP bool
	// Private allows connections to private addresses (RFC 1918, CGNAT
	// 100.64.0.0/10, unique-local fc00::/7): integrations with a server on
	// the deployment's own network, such as GitHub Enterprise Server. Never
	// for webhooks. Metadata addresses stay refused.
	Private bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// WithPrivate is p with private addresses allowed or not: the rules of
// integrations, from those of webhooks and the deployment's setting.
func (p Policy) WithPrivate(private bool) Policy {
	p.Private = private
	return p
}

// Resolver resolves a host name to addresses (*net.Resolver is one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrRefused is wrapped by every error of a destination the policy refuses.
var ErrRefused = errors.New("destination refused")

// RefusedError says why an address or URL is refused; its message is meant
// for the caller (a 422 detail, a delivery's error).
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string { return e.Reason }

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Unwrap() error { return ErrRefused }

func refused(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// MaxURL is the longest URL accepted, in bytes.
const MaxURL = 2048

// CheckURL parses a destination URL and checks what can be checked without
// resolving it: the scheme (https; http only to a loopback host when the
// policy allows it), no user name or password, a host, a port (if any) of
// 1 to 65535, and a literal IP address that the policy allows.
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURL {
		return nil, refused("must be at most %d bytes", MaxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, refused("must be an absolute URL")
	}
	if u.User != nil {
		return nil, refused("must not hold a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return nil, refused("must name a host")
	}
	if port := u.Port(); port != "" {
		// url.Parse takes any digits; a port out of range could only fail
		// every delivery.
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return nil, refused("port must be 1 to 65535")
		}
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !p.LoopbackHTTP || !loopbackHost(host) {
			return nil, refused("must use https")
		}
	default:
		return nil, refused("must use https")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return u, p.Allowed(ip)
	}
	if isLocalhost(host) && !p.LoopbackHTTP {
		return nil, refused("%s is a loopback name", host)
	}
	return u, nil
}

// CheckAPIURL checks the root of an API that requests are built under (an
// integration's api_url): what CheckURL checks, and no query or fragment,
// not even an empty one, since a path appended to such a URL would land in
// the query or be cut off.
func (p Policy) CheckAPIURL(raw string) (*url.URL, error) {
	u, err := p.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	// url.Parse cuts at the first '#': any '#' left is the fragment's.
	if u.RawQuery != "" || u.ForceQuery || strings.ContainsRune(raw, '#') {
		return nil, refused("must not hold a query or a fragment")
	}
	return u, nil
}

// CheckName resolves the host of a URL that CheckURL accepted and refuses
// it when any of its addresses is refused, for a clear answer when a
// destination is subscribed. A name that does not resolve is not refused
// here: deliveries to it fail, and are retried, until it does. Connections
// are checked again whatever this said.
func (p Policy) CheckName(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	addrs, err := p.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range addrs {
		if err := p.Allowed(ip); err != nil {
			return refused("%s resolves to %v", host, err)
		}
	}
	return nil
}

// Allowed returns nil when the policy lets a connection reach ip, else a
// *RefusedError naming the kind of address.
func (p Policy) Allowed(ip netip.Addr) error {
	kind := Classify(ip)
	switch {
	case kind == Public:
		return nil
	case kind == Loopback && p.LoopbackHTTP:
		return nil
	case (kind == Private || kind == UniqueLocal) && p.Private:
		return nil
	}
	return refused("%s is a %s address", ip.WithZone(""), kind)
}

// Control is a net.Dialer Control function: it refuses a connection to an
// address the policy does not allow, before the connection is made.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refused("cannot check the address %q", address)
	}
	return p.Allowed(ap.Addr())
}

func (p Policy) resolver() Resolver {
	if p.Resolver == nil {
		return net.DefaultResolver
	}
	return p.Resolver
}

// DialContext resolves the host through the policy's resolver and dials its
// addresses in turn with a dialer whose Control function checks each one.
func (p Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if addrs, err = p.resolver().LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.Control}
	var errs []error
	for _, ip := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	return nil, errors.Join(errs...)
}

// Client returns an HTTP client that dials through the policy, uses no
// proxy (whatever the environment says), follows no redirect (a 3xx is the
// answer) and gives up on a request after timeout. Connections are kept
// alive and reused.
func (p Policy) Client(timeout time.Duration) *http.Client {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// loopbackHost reports whether host is a loopback literal or localhost.
func loopbackHost(host string) bool {
	if ip, err := netip.ParseAddr(host); err == nil {
		return Classify(ip) == Loopback
	}
	return isLocalhost(host)
}

// isLocalhost reports whether host is localhost or a name under it, which
// resolve to loopback addresses (RFC 6761).
func isLocalhost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}
