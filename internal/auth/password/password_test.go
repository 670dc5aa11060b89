package password

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	h, err := Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(h, "correct horse") {
		t.Fatalf("hash %q is not an argon2id PHC string", h)
	}
	h2, _ := Hash("correct horse battery")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	for pw, want := range map[string]bool{"correct horse battery": true, "correct horse batterY": false, "": false} {
		ok, err := Check(h, pw)
		if err != nil || ok != want {
			t.Errorf("Check(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	if ok, err := Check("", "anything"); ok || err != nil {
		t.Errorf("an empty hash matched or failed: %v, %v", ok, err)
	}
	if _, err := Check(DummyHash, "x"); err != nil {
		t.Errorf("the dummy hash does not parse: %v", err)
	}
	if _, err := Check("$2a$10$abc", "x"); err == nil {
		t.Error("a bcrypt hash was accepted as argon2id")
	}
}

func TestGenerate(t *testing.T) {
	a, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate()
	if len(a) != 24 || a == b {
		t.Fatalf("Generate gave %q and %q; want two different 24-character passwords", a, b)
	}
	var scheme Argon2id
	h, err := scheme.Hash(a)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := scheme.Check(h, a); !ok || err != nil {
		t.Fatalf("a generated password does not check against its hash: %v, %v", ok, err)
	}
}
