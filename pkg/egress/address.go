package egress

import "net/netip"

// Kind is what an address is, as far as reaching it from scangate goes.
type Kind string

// The kinds of address. Only Public is reached by default.
const (
	Public        Kind = "public"
	Metadata      Kind = "cloud metadata"
	Loopback      Kind = "loopback"
	Private       Kind = "private"
	UniqueLocal   Kind = "unique-local"
	LinkLocal     Kind = "link-local"
	Multicast     Kind = "multicast"
	Unspecified   Kind = "unspecified"
	Reserved      Kind = "reserved"
	Documentation Kind = "documentation"
)

// metadata are the cloud providers' instance metadata services: AWS, GCP
// and Azure (169.254.169.254, also AWS's IPv6 fd00:ec2::254) and Alibaba
// (100.100.100.200). They are refused even where private addresses are
// allowed.
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// Ranges beyond what netip's predicates name.
var (
	cgnat        = netip.MustParsePrefix("100.64.0.0/10")  // shared address space (RFC 6598)
	thisNetwork  = netip.MustParsePrefix("0.0.0.0/8")      // "this network" (RFC 791)
	ietf         = netip.MustParsePrefix("192.0.0.0/24")   // IETF protocol assignments (RFC 6890)
	benchmarking = netip.MustParsePrefix("198.18.0.0/15")  // RFC 2544
	classE       = netip.MustParsePrefix("240.0.0.0/4")    // reserved, and the broadcast address
	v4Compatible = netip.MustParsePrefix("::/96")          // deprecated IPv4-compatible IPv6
	nat64        = netip.MustParsePrefix("64:ff9b::/96")   // NAT64 well-known prefix (RFC 6052)
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48") // NAT64 local use (RFC 8215)
	sixToFour    = netip.MustParsePrefix("2002::/16")      // 6to4: an IPv4 address in bits 16-48
	discard      = netip.MustParsePrefix("100::/64")       // discard-only (RFC 6666)
	siteLocal    = netip.MustParsePrefix("fec0::/10")      // deprecated site-local
)

// Classify says what kind of address ip is. An IPv6 address that carries
// an IPv4 one (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4
// 2002::/16) is the kind of the IPv4 address it carries.
func Classify(ip netip.Addr) Kind {
	ip = ip.WithZone("").Unmap()
	for _, m := range metadata {
		if ip == m {
			return Metadata
		}
	}
	if ip.Is6() {
		if v4, ok := embeddedIPv4(ip); ok {
			return Classify(v4)
		}
	}
	switch {
	case !ip.IsValid() || ip.IsUnspecified():
		return Unspecified
	case ip.IsLoopback():
		return Loopback
	case ip.IsPrivate() && ip.Is6():
		return UniqueLocal
	case ip.IsPrivate() || cgnat.Contains(ip):
		return Private
	case ip.IsLinkLocalUnicast() || siteLocal.Contains(ip):
		return LinkLocal
	case ip.IsMulticast():
		return Multicast
	}
	for _, r := range []netip.Prefix{thisNetwork, ietf, benchmarking, classE, v4Compatible, nat64Local, discard} {
		if r.Contains(ip) {
			return Reserved
		}
	}
	return Public
}

// embeddedIPv4 returns the IPv4 address a NAT64 or 6to4 address carries.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
