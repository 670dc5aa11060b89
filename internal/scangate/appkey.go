package scangate

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// MaxAppKey bounds a GitHub App's private key (PEM), in bytes: GitHub's
// are 2048-bit RSA keys, about 1.7 KB.
const MaxAppKey = 16 << 10

// CheckAppKey reports whether key is what GitHub hands out as an App's
// private key: one RSA private key in PEM, PKCS #1 ("RSA PRIVATE KEY") or
// PKCS #8 ("PRIVATE KEY"), as the JWT library that signs with it
// (golang-jwt's ParseRSAPrivateKeyFromPEM) reads it. The standard library
// suffices here; the API links no provider's client. The error never
// quotes the key.
func CheckAppKey(key string) error {
	if len(key) > MaxAppKey {
		return fmt.Errorf("must be at most %d bytes", MaxAppKey)
	}
	block, rest := pem.Decode([]byte(key))
	if block == nil {
		return fmt.Errorf("must be an RSA private key in PEM")
	}
	if len(trimSpace(rest)) != 0 {
		return fmt.Errorf("must be one PEM block, with nothing after it")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			return fmt.Errorf("is not a PKCS #1 RSA private key")
		}
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return fmt.Errorf("is not a PKCS #8 private key")
		}
		if _, ok := k.(*rsa.PrivateKey); !ok {
			return fmt.Errorf("must be an RSA key (GitHub signs App JWTs with RS256)")
		}
	default:
		return fmt.Errorf("must be an RSA private key in PEM, not %q", block.Type)
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}
