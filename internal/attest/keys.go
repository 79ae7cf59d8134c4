package attest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// KeyFileType is the _type of a Fabric key file.
const KeyFileType = "fabric.key/v1alpha1"

// PublicKey is an ed25519 public key and its id.
type PublicKey struct {
	ID  string
	Key ed25519.PublicKey
}

// PrivateKey is an ed25519 private key, its id and the role it was made
// for (a label: trust decides what a key may sign).
type PrivateKey struct {
	ID   string
	Role string
	key  ed25519.PrivateKey
}

// Public is the key's public half.
func (k *PrivateKey) Public() PublicKey {
	return PublicKey{ID: k.ID, Key: k.key.Public().(ed25519.PublicKey)}
}

// KeyID is the hex sha256 of a raw ed25519 public key.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:])
}

// NewPublicKey checks raw's size and returns it with its id.
func NewPublicKey(raw []byte) (PublicKey, error) {
	if len(raw) != ed25519.PublicKeySize {
		return PublicKey{}, fmt.Errorf("attest: an ed25519 public key has %d bytes, not %d", ed25519.PublicKeySize, len(raw))
	}
	pub := ed25519.PublicKey(bytes.Clone(raw))
	return PublicKey{ID: KeyID(pub), Key: pub}, nil
}

// GenerateKey makes a new key pair for role.
func GenerateKey(role string) (*PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &PrivateKey{ID: KeyID(pub), Role: role, key: priv}, nil
}

// keyFile is the JSON of a key file. The private half is the 32-byte
// ed25519 seed; a public key file has none.
type keyFile struct {
	Type    string `json:"_type"`
	Alg     string `json:"alg"`
	Role    string `json:"role,omitempty"`
	KeyID   string `json:"keyid"`
	Public  []byte `json:"public"`
	Private []byte `json:"private,omitempty"`
}

// WritePrivateKey writes k to path with mode 0600, failing if the file
// exists (a key is never overwritten by accident).
func WritePrivateKey(path string, k *PrivateKey) error {
	b, err := json.MarshalIndent(keyFile{Type: KeyFileType, Alg: "ed25519", Role: k.Role, KeyID: k.ID, Public: k.Public().Key, Private: k.key.Seed()}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("attest: write key: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("attest: write key %s: %w", path, err)
	}
	return f.Close()
}

// MarshalPublicKey is the key file of k's public half.
func MarshalPublicKey(k PublicKey, role string) ([]byte, error) {
	b, err := json.MarshalIndent(keyFile{Type: KeyFileType, Alg: "ed25519", Role: role, KeyID: k.ID, Public: k.Key}, "", "  ")
	return append(b, '\n'), err
}

// ReadPrivateKey reads a private key file, refusing one that others can
// read, one whose id does not match its key, and anything that is not a
// Fabric ed25519 key file. Errors name the file.
func ReadPrivateKey(path string) (*PrivateKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("attest: key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("attest: key %s: mode %v lets others read it; chmod 600", path, st.Mode().Perm())
	}
	kf, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	if len(kf.Private) != ed25519.SeedSize {
		return nil, fmt.Errorf("attest: key %s: private: not an ed25519 seed of %d bytes", path, ed25519.SeedSize)
	}
	priv := ed25519.NewKeyFromSeed(kf.Private)
	k := &PrivateKey{ID: KeyID(priv.Public().(ed25519.PublicKey)), Role: kf.Role, key: priv}
	if kf.KeyID != k.ID || !bytes.Equal(kf.Public, k.Public().Key) {
		return nil, fmt.Errorf("attest: key %s: keyid or public does not match the private key", path)
	}
	return k, nil
}

// ReadPublicKey reads the public half of a key file (public or private).
func ReadPublicKey(path string) (PublicKey, string, error) {
	kf, err := readKeyFile(path)
	if err != nil {
		return PublicKey{}, "", err
	}
	pub, err := NewPublicKey(kf.Public)
	if err != nil {
		return PublicKey{}, "", fmt.Errorf("attest: key %s: public: %w", path, err)
	}
	if kf.KeyID != pub.ID {
		return PublicKey{}, "", fmt.Errorf("attest: key %s: keyid %q is not the sha256 of its public key (%s)", path, kf.KeyID, pub.ID)
	}
	return pub, kf.Role, nil
}

func readKeyFile(path string) (keyFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return keyFile{}, fmt.Errorf("attest: key: %w", err)
	}
	var kf keyFile
	if err := decodeStrict(data, &kf); err != nil {
		return keyFile{}, fmt.Errorf("attest: key %s: %w", path, err)
	}
	if kf.Type != KeyFileType {
		return keyFile{}, fmt.Errorf("attest: key %s: _type %q, want %q", path, kf.Type, KeyFileType)
	}
	if kf.Alg != "ed25519" {
		return keyFile{}, fmt.Errorf("attest: key %s: alg %q, only ed25519 is supported", path, kf.Alg)
	}
	return kf, nil
}

// decodeStrict decodes one JSON value with unknown fields refused and
// nothing after it.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}
