package scangate_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

// CheckAppKey takes an RSA key in PEM, PKCS #1 or #8, and nothing else;
// its errors never quote the key.
func TestCheckAppKey(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	p8der, _ := x509.MarshalPKCS8PrivateKey(k)
	p8 := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8der}))
	for _, good := range []string{p1, p8, p1 + "\n"} {
		if err := scangate.CheckAppKey(good); err != nil {
			t.Errorf("%.30q: %v", good, err)
		}
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecder, _ := x509.MarshalPKCS8PrivateKey(ec)
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.PublicKey)}))
	for _, bad := range []string{"", "ghp_token", pub, p1 + p1,
		"-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n",
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecder})),
		strings.Repeat("A", scangate.MaxAppKey+1)} {
		err := scangate.CheckAppKey(bad)
		if err == nil {
			t.Errorf("%.40q: accepted", bad)
		} else if strings.Contains(err.Error(), "MII") || strings.Contains(err.Error(), "AAAA") {
			t.Errorf("error quotes the key: %v", err)
		}
	}
}
