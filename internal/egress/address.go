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

// special is one range of the table below.
type special struct {
	prefix netip.Prefix
	// reachable is the registry's "Globally Reachable"; N/A (the
	// deprecated ranges) is false.
	reachable bool
	kind      Kind
}

func row(prefix string, reachable bool, kind Kind) special {
	return special{netip.MustParsePrefix(prefix), reachable, kind}
}

// specials is the one table of special-purpose addresses. Source: the IANA
// IPv4 Special-Purpose Address Registry and the IANA IPv6 Special-Purpose
// Address Registry (RFC 6890 as updated by RFC 8190, with the entries of
// RFCs 7526, 8155, 8215, 9374, 9602, 9637, 9665 and 9780), transcribed on
// 2026-11-28, each row with its "Globally Reachable" value. The most
// specific row containing an address decides; an address in no row is
// public. Rows marked "scangate" are not in the registries: multicast
// (its own registries) and deprecated forms that no destination should
// use. Addresses that carry an IPv4 address (IPv4-mapped ::ffff:0:0/96,
// IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
// 6to4 2002::/16, Teredo 2001::/32) are judged by the IPv4 address they
// carry before this table is consulted (see embeddedIPv4).
var specials = []special{
	// IPv4.
	row("0.0.0.0/8", false, Reserved),            // "this network" (RFC 791)
	row("0.0.0.0/32", false, Unspecified),        // "this host on this network" (RFC 1122)
	row("10.0.0.0/8", false, Private),            // private-use (RFC 1918)
	row("100.64.0.0/10", false, Private),         // shared address space (RFC 6598)
	row("127.0.0.0/8", false, Loopback),          // loopback (RFC 1122)
	row("169.254.0.0/16", false, LinkLocal),      // link local (RFC 3927)
	row("172.16.0.0/12", false, Private),         // private-use (RFC 1918)
	row("192.0.0.0/24", false, Reserved),         // IETF protocol assignments (RFC 6890)
	row("192.0.0.0/29", false, Reserved),         // IPv4 service continuity prefix (RFC 7335)
	row("192.0.0.8/32", false, Reserved),         // IPv4 dummy address (RFC 7600)
	row("192.0.0.9/32", true, Public),            // port control protocol anycast (RFC 7723)
	row("192.0.0.10/32", true, Public),           // traversal using relays around NAT anycast (RFC 8155)
	row("192.0.0.170/32", false, Reserved),       // NAT64/DNS64 discovery (RFC 7050)
	row("192.0.0.171/32", false, Reserved),       // NAT64/DNS64 discovery (RFC 7050)
	row("192.0.2.0/24", false, Documentation),    // TEST-NET-1 (RFC 5737)
	row("192.31.196.0/24", true, Public),         // AS112-v4 (RFC 7535)
	row("192.52.193.0/24", true, Public),         // AMT (RFC 7450)
	row("192.88.99.0/24", false, Reserved),       // deprecated 6to4 relay anycast (RFC 7526), N/A
	row("192.168.0.0/16", false, Private),        // private-use (RFC 1918)
	row("192.175.48.0/24", true, Public),         // direct delegation AS112 service (RFC 7534)
	row("198.18.0.0/15", false, Reserved),        // benchmarking (RFC 2544)
	row("198.51.100.0/24", false, Documentation), // TEST-NET-2 (RFC 5737)
	row("203.0.113.0/24", false, Documentation),  // TEST-NET-3 (RFC 5737)
	row("224.0.0.0/4", false, Multicast),         // scangate: multicast (RFC 5771)
	row("240.0.0.0/4", false, Reserved),          // reserved (RFC 1112)
	row("255.255.255.255/32", false, Reserved),   // limited broadcast (RFC 919)
	// IPv6.
	row("::1/128", false, Loopback),            // loopback (RFC 4291)
	row("::/128", false, Unspecified),          // unspecified (RFC 4291)
	row("::/96", false, Reserved),              // scangate: deprecated IPv4-compatible (RFC 4291)
	row("::ffff:0:0/96", false, Reserved),      // IPv4-mapped (RFC 4291): judged as IPv4 first
	row("64:ff9b::/96", true, Public),          // IPv4-IPv6 translation (RFC 6052): judged as IPv4 first
	row("64:ff9b:1::/48", false, Reserved),     // IPv4-IPv6 translation, local use (RFC 8215)
	row("100::/64", false, Reserved),           // discard-only (RFC 6666)
	row("100:0:0:1::/64", false, Reserved),     // dummy IPv6 prefix (RFC 9780)
	row("2001::/23", false, Reserved),          // IETF protocol assignments (RFC 2928)
	row("2001::/32", false, Reserved),          // Teredo (RFC 4380), N/A: judged as IPv4 first
	row("2001:1::1/128", true, Public),         // port control protocol anycast (RFC 7723)
	row("2001:1::2/128", true, Public),         // traversal using relays around NAT anycast (RFC 8155)
	row("2001:1::3/128", true, Public),         // DNS-SD service registration protocol anycast (RFC 9665)
	row("2001:2::/48", false, Reserved),        // benchmarking (RFC 5180)
	row("2001:3::/32", true, Public),           // AMT (RFC 7450)
	row("2001:4:112::/48", true, Public),       // AS112-v6 (RFC 7535)
	row("2001:10::/28", false, Reserved),       // deprecated ORCHID (RFC 4843), N/A
	row("2001:20::/28", true, Public),          // ORCHIDv2 (RFC 7343)
	row("2001:30::/28", true, Public),          // drone remote ID protocol entity tags (RFC 9374)
	row("2001:db8::/32", false, Documentation), // documentation (RFC 3849)
	row("2002::/16", false, Reserved),          // 6to4 (RFC 3056), N/A: judged as IPv4 first
	row("2620:4f:8000::/48", true, Public),     // direct delegation AS112 service (RFC 7534)
	row("3fff::/20", false, Documentation),     // documentation (RFC 9637)
	row("5f00::/16", false, Reserved),          // segment routing (SRv6) SIDs (RFC 9602)
	row("fc00::/7", false, UniqueLocal),        // unique-local (RFC 4193)
	row("fe80::/10", false, LinkLocal),         // link-local unicast (RFC 4291)
	row("fec0::/10", false, LinkLocal),         // scangate: deprecated site-local (RFC 3879)
	row("ff00::/8", false, Multicast),          // scangate: multicast (RFC 4291)
}

// The forms of IPv6 address that carry an IPv4 one.
var (
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765)
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // NAT64 well-known prefix (RFC 6052)
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")  // NAT64 local use (RFC 8215)
	sixToFour  = netip.MustParsePrefix("2002::/16")       // 6to4 (RFC 3056)
	teredo     = netip.MustParsePrefix("2001::/32")       // Teredo (RFC 4380)
)

// Classify says what kind of address ip is. An IPv6 address that carries
// an IPv4 one is the kind of the IPv4 address it carries, except that the
// NAT64 local-use prefix, not globally reachable itself, is never public.
func Classify(ip netip.Addr) Kind {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return Unspecified
	}
	for _, m := range metadata {
		if ip == m {
			return Metadata
		}
	}
	if v4, ok := embeddedIPv4(ip); ok {
		kind := Classify(v4)
		if kind == Public && nat64Local.Contains(ip) {
			return Reserved
		}
		return kind
	}
	best, kind := -1, Public
	for _, s := range specials {
		if s.prefix.Contains(ip) && s.prefix.Bits() > best {
			best, kind = s.prefix.Bits(), s.kind
			if s.reachable {
				kind = Public
			}
		}
	}
	return kind
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries: in its
// last 32 bits (IPv4-translated, NAT64), around the u octet of RFC 6052's
// /48 layout (NAT64 local use), in bits 16 to 47 (6to4), or inverted in its
// last 32 bits (Teredo's client address).
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case translated.Contains(ip), nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case nat64Local.Contains(ip):
		return netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case teredo.Contains(ip):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}
