package attest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The DSSE specification's own PAE example.
func TestPAEMatchesTheSpecification(t *testing.T) {
	got := PAE("http://example.com/HelloWorld", []byte("hello world"))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; string(got) != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
}

func mustKey(t *testing.T, role string) *PrivateKey {
	t.Helper()
	k, err := GenerateKey(role)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignVerify(t *testing.T) {
	a, b, other := mustKey(t, "catalog"), mustKey(t, "catalog"), mustKey(t, "publisher")
	const typ = "application/vnd.fabric.test+json"
	payload := []byte(`{"serial":1}`)
	env, err := Sign(typ, payload, a)
	if err != nil {
		t.Fatal(err)
	}
	env.AddSignature(b)
	// Through JSON, as it is stored.
	data, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env, err = ParseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	keys := []PublicKey{a.Public(), b.Public(), other.Public()}
	v, err := Verify(env, typ, keys)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Has(a.ID) || !v.Has(b.ID) || v.Has(other.ID) {
		t.Fatalf("verified %v", v.KeyIDs)
	}
	if n := v.Count([]string{a.ID, a.ID, b.ID, other.ID}); n != 2 {
		t.Errorf("count = %d, want 2 (a key listed twice counts once)", n)
	}

	// Two signatures by one key count once.
	dup, _ := Sign(typ, payload, a, a)
	if v, _ := Verify(dup, typ, keys); len(v.KeyIDs) != 1 {
		t.Errorf("a key that signed twice verified as %v", v.KeyIDs)
	}

	// A wrong keyid hint does not matter: the signature is tried with every key.
	hinted, _ := Sign(typ, payload, a)
	hinted.Signatures[0].KeyID = other.ID
	if v, err := Verify(hinted, typ, keys); err != nil || !v.Has(a.ID) {
		t.Errorf("wrong hint: %v, %v", v.KeyIDs, err)
	}

	tamper := []struct {
		name string
		edit func(e *Envelope)
	}{
		{"payload", func(e *Envelope) { e.Payload[0] ^= 1 }},
		{"payload type", func(e *Envelope) { e.PayloadType += "x" }},
		{"signature", func(e *Envelope) { e.Signatures[0].Sig[5] ^= 1 }},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := Sign(typ, payload, a)
			tc.edit(e)
			if _, err := Verify(e, "", []PublicKey{a.Public()}); !errors.Is(err, ErrNoValidSignature) {
				t.Errorf("a flipped %s verified: %v", tc.name, err)
			}
		})
	}
	// A key outside the set given does not verify.
	if _, err := Verify(env, typ, []PublicKey{other.Public()}); !errors.Is(err, ErrNoValidSignature) {
		t.Errorf("a non-role key verified: %v", err)
	}
	if _, err := Verify(env, "application/other", keys); err == nil {
		t.Error("a payload type other than the one wanted verified")
	}
}

func TestEnvelopeJSONIsDSSE(t *testing.T) {
	k := mustKey(t, "qualifier")
	env, _ := Sign("t", []byte("hi"), k)
	data, _ := env.Marshal()
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["payload"] != "aGk=" || raw["payloadType"] != "t" {
		t.Errorf("envelope JSON = %s", data)
	}
	for _, bad := range []string{`{"payloadType":"t","payload":"aGk=","signatures":[]}`, `{"payload":"aGk=","signatures":[{"sig":"AA=="}]}`, `{"payloadType":"t","payload":"aGk=","signatures":[{"sig":"AA=="}],"x":1}`} {
		if _, err := ParseEnvelope([]byte(bad)); err == nil {
			t.Errorf("ParseEnvelope(%s) succeeded", bad)
		}
	}
}

func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	k := mustKey(t, "revoker")
	path := filepath.Join(dir, "revoker.key")
	if err := WritePrivateKey(path, k); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivateKey(path, k); err == nil {
		t.Error("an existing key file was overwritten")
	}
	got, err := ReadPrivateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || got.Role != "revoker" {
		t.Errorf("read %s/%s, want %s/revoker", got.ID, got.Role, k.ID)
	}
	env, _ := Sign("t", []byte("x"), got)
	if _, err := Verify(env, "t", []PublicKey{k.Public()}); err != nil {
		t.Errorf("a key read back does not sign as the original: %v", err)
	}
	pub, role, err := ReadPublicKey(path)
	if err != nil || pub.ID != k.ID || role != "revoker" {
		t.Errorf("ReadPublicKey = %v %q %v", pub.ID, role, err)
	}
	pubFile := filepath.Join(dir, "revoker.pub")
	data, _ := MarshalPublicKey(k.Public(), "revoker")
	if bytes.Contains(data, []byte(`"private"`)) {
		t.Fatalf("public key file holds the private key: %s", data)
	}
	os.WriteFile(pubFile, data, 0o644)
	if _, err := ReadPrivateKey(pubFile); err == nil {
		t.Error("a public key file read as a private key")
	}

	os.Chmod(path, 0o644)
	if _, err := ReadPrivateKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key: %v", err)
	}
	os.Chmod(path, 0o600)
	data, _ = os.ReadFile(path)
	var kf map[string]any
	json.Unmarshal(data, &kf)
	kf["keyid"] = strings.Repeat("0", 64)
	data, _ = json.Marshal(kf)
	os.WriteFile(path, data, 0o600)
	if _, err := ReadPrivateKey(path); err == nil {
		t.Error("a key file whose keyid is wrong was read")
	}
}

func FuzzParseEnvelope(f *testing.F) {
	k, _ := GenerateKey("x")
	env, _ := Sign("t", []byte("payload"), k)
	data, _ := env.Marshal()
	f.Add(data)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := ParseEnvelope(data)
		if err != nil {
			return
		}
		Verify(env, "", []PublicKey{k.Public()})
	})
}
