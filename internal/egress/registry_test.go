package egress_test

import (
	"net/netip"
	"testing"

	"github.com/scangate/scangate/internal/egress"
)

// Every range of the IANA IPv4 and IPv6 Special-Purpose Address Registries
// whose "Globally Reachable" is False (or N/A for the deprecated ones) is
// refused: an address inside each, at both ends where the range is wider
// than one address, written here from the registries rather than from the
// package's table.
func TestRegistryRangesAreRefused(t *testing.T) {
	refused := map[string][]string{
		// IPv4 registry.
		"0.0.0.0/8 this network":                 {"0.0.0.1", "0.255.255.255"},
		"0.0.0.0/32 this host":                   {"0.0.0.0"},
		"10.0.0.0/8 private-use":                 {"10.0.0.0", "10.255.255.255"},
		"100.64.0.0/10 shared address space":     {"100.64.0.0", "100.127.255.255"},
		"127.0.0.0/8 loopback":                   {"127.0.0.0", "127.255.255.255"},
		"169.254.0.0/16 link local":              {"169.254.0.0", "169.254.255.255"},
		"172.16.0.0/12 private-use":              {"172.16.0.0", "172.31.255.255"},
		"192.0.0.0/24 IETF protocol assignments": {"192.0.0.0", "192.0.0.11", "192.0.0.255"},
		"192.0.0.0/29 IPv4 service continuity":   {"192.0.0.1", "192.0.0.7"},
		"192.0.0.8/32 IPv4 dummy address":        {"192.0.0.8"},
		"192.0.0.170/32 NAT64/DNS64 discovery":   {"192.0.0.170"},
		"192.0.0.171/32 NAT64/DNS64 discovery":   {"192.0.0.171"},
		"192.0.2.0/24 TEST-NET-1":                {"192.0.2.0", "192.0.2.1", "192.0.2.255"},
		"192.88.99.0/24 6to4 relay anycast":      {"192.88.99.0", "192.88.99.1", "192.88.99.2", "192.88.99.255"},
		"192.168.0.0/16 private-use":             {"192.168.0.0", "192.168.255.255"},
		"198.18.0.0/15 benchmarking":             {"198.18.0.0", "198.19.255.255"},
		"198.51.100.0/24 TEST-NET-2":             {"198.51.100.0", "198.51.100.1", "198.51.100.255"},
		"203.0.113.0/24 TEST-NET-3":              {"203.0.113.0", "203.0.113.1", "203.0.113.255"},
		"240.0.0.0/4 reserved":                   {"240.0.0.0", "255.255.255.254"},
		"255.255.255.255/32 limited broadcast":   {"255.255.255.255"},
		// IPv6 registry.
		"::1/128 loopback":                    {"::1"},
		"::/128 unspecified":                  {"::"},
		"::ffff:0:0/96 IPv4-mapped":           {"::ffff:0.0.0.1", "::ffff:10.0.0.1"},
		"64:ff9b:1::/48 IPv4-IPv6 local-use":  {"64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:1:808:8:800::"},
		"100::/64 discard-only":               {"100::", "100::ffff:ffff:ffff:ffff"},
		"100:0:0:1::/64 dummy IPv6 prefix":    {"100:0:0:1::", "100::1:ffff:ffff:ffff:ffff"},
		"2001::/23 IETF protocol assignments": {"2001:1::4", "2001:5::1", "2001:1ff:ffff::1"},
		"2001:2::/48 benchmarking":            {"2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff"},
		"2001:10::/28 ORCHID (deprecated)":    {"2001:10::1", "2001:1f:ffff::1"},
		"2001:db8::/32 documentation":         {"2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"},
		"3fff::/20 documentation":             {"3fff::", "3fff::1", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"},
		"5f00::/16 SRv6 SIDs":                 {"5f00::", "5f00::1", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		"fc00::/7 unique-local":               {"fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		"fe80::/10 link-local":                {"fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		// Beyond the registries: multicast, deprecated forms.
		"224.0.0.0/4 multicast":              {"224.0.0.1", "239.255.255.255"},
		"ff00::/8 multicast":                 {"ff02::1", "ff0e::1"},
		"fec0::/10 site-local (deprecated)":  {"fec0::1"},
		"::/96 IPv4-compatible (deprecated)": {"::808:808", "::a00:1"},
	}
	for name, ips := range refused {
		for _, s := range ips {
			ip := netip.MustParseAddr(s)
			if k := egress.Classify(ip); k == egress.Public {
				t.Errorf("%s: %s is %s, want refused", name, s, k)
			}
			if err := (egress.Policy{}).Allowed(ip); err == nil {
				t.Errorf("%s: %s allowed by the strict policy", name, s)
			}
		}
	}
}

// The registries' globally reachable entries, and public addresses just
// outside refused ranges, are accepted.
func TestRegistryReachableAreAccepted(t *testing.T) {
	for _, s := range []string{
		"8.8.8.8", "93.184.216.34", "1.1.1.1",
		"192.0.0.9",      // PCP anycast (globally reachable)
		"192.0.0.10",     // TURN anycast (globally reachable)
		"192.31.196.1",   // AS112-v4
		"192.52.193.1",   // AMT
		"192.175.48.1",   // direct delegation AS112
		"192.0.1.1",      // after 192.0.0.0/24
		"192.0.3.1",      // after TEST-NET-1
		"192.88.98.255",  // before the 6to4 relay range
		"198.17.255.255", // before benchmarking
		"198.20.0.0",     // after benchmarking
		"198.51.99.255", "198.51.101.0",
		"203.0.112.255", "203.0.114.0",
		"223.255.255.255",
		"2606:4700:4700::1111",
		"2001:1::1", "2001:1::2", "2001:1::3", // PCP, TURN, DNS-SD SRP anycast
		"2001:3::1",       // AMT
		"2001:4:112::1",   // AS112-v6
		"2001:20::1",      // ORCHIDv2
		"2001:30::1",      // drone remote ID
		"2620:4f:8000::1", // direct delegation AS112
		"2001:200::1",     // after 2001::/23
		"2001:db9::1",     // after documentation
		"3ffe:ffff::1",    // before 3fff::/20
		"3fff:1000::1",    // after 3fff::/20
		"5eff:ffff::1", "5f01::1",
		"64:ff9b::808:808",                     // NAT64 of 8.8.8.8
		"::ffff:0:808:808",                     // IPv4-translated 8.8.8.8
		"2002:808:808::1",                      // 6to4 of 8.8.8.8
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
	} {
		ip := netip.MustParseAddr(s)
		if err := (egress.Policy{}).Allowed(ip); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
}

// An IPv4 address carried in an IPv6 one is judged by the IPv4 rules, in
// every form that carries one.
func TestEmbeddedIPv4IsJudgedAsIPv4(t *testing.T) {
	forms := map[string]func(v4 [4]byte) string{
		"IPv4-mapped ::ffff:0:0/96": func(b [4]byte) string {
			return netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}).String()
		},
		"IPv4-translated ::ffff:0:0:0/96": func(b [4]byte) string {
			return netip.AddrFrom16([16]byte{8: 0xff, 9: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}).String()
		},
		"NAT64 64:ff9b::/96": func(b [4]byte) string {
			return netip.AddrFrom16([16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}).String()
		},
		"NAT64 local-use 64:ff9b:1::/48": func(b [4]byte) string {
			// RFC 6052 for a /48: octets 1-2 in bits 48-63, bits 64-71
			// zero, octets 3-4 in bits 72-87.
			return netip.AddrFrom16([16]byte{1: 0x64, 2: 0xff, 3: 0x9b, 5: 0x01, 6: b[0], 7: b[1], 9: b[2], 10: b[3]}).String()
		},
		"6to4 2002::/16": func(b [4]byte) string {
			return netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: b[0], 3: b[1], 4: b[2], 5: b[3], 15: 1}).String()
		},
		"Teredo 2001::/32": func(b [4]byte) string {
			// server 65.54.227.120, the client's address XOR-ed.
			return netip.AddrFrom16([16]byte{0: 0x20, 1: 0x01, 4: 65, 5: 54, 6: 227, 7: 120, 8: 0x80,
				12: ^b[0], 13: ^b[1], 14: ^b[2], 15: ^b[3]}).String()
		},
	}
	inner := map[string]egress.Kind{
		"127.0.0.1":       egress.Loopback,
		"10.1.2.3":        egress.Private,
		"192.168.0.1":     egress.Private,
		"169.254.169.254": egress.Metadata,
		"100.100.100.200": egress.Metadata,
		"169.254.1.1":     egress.LinkLocal,
		"0.0.0.0":         egress.Unspecified,
		"192.0.2.1":       egress.Documentation,
		"198.51.100.7":    egress.Documentation,
		"224.0.0.251":     egress.Multicast,
		"255.255.255.255": egress.Reserved,
	}
	for form, embed := range forms {
		for v4, want := range inner {
			s := embed(netip.MustParseAddr(v4).As4())
			got := egress.Classify(netip.MustParseAddr(s))
			if got != want {
				t.Errorf("%s carrying %s (%s) is %s, want %s", form, v4, s, got, want)
			}
			if err := (egress.Policy{}).Allowed(netip.MustParseAddr(s)); err == nil {
				t.Errorf("%s carrying %s (%s) allowed", form, v4, s)
			}
		}
		public := embed([4]byte{8, 8, 8, 8})
		got := egress.Classify(netip.MustParseAddr(public))
		if form == "NAT64 local-use 64:ff9b:1::/48" {
			// Not globally reachable itself, whatever it carries.
			if got == egress.Public {
				t.Errorf("%s carrying 8.8.8.8 (%s) is public", form, public)
			}
		} else if got != egress.Public {
			t.Errorf("%s carrying 8.8.8.8 (%s) is %s, want public", form, public, got)
		}
	}
}

// The issue's own examples, at subscription: CheckURL refuses each literal.
func TestCheckURLRefusesSpecialPurposeLiterals(t *testing.T) {
	for _, host := range []string{
		"192.0.2.1", "198.51.100.1", "203.0.113.1", "192.88.99.1",
		"[2001:db8::1]", "[3fff::1]", "[2001:10::1]", "[5f00::1]",
		"[2001:0:4136:e378:8000:63bf:3fff:fdfe]", // Teredo, client 192.0.2.1
		"[::ffff:0:a9fe:a9fe]",
	} {
		if _, err := (egress.Policy{}).CheckURL("https://" + host + "/hook"); err == nil {
			t.Errorf("https://%s/hook accepted", host)
		}
	}
}
