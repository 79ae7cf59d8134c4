package attest

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Envelope is a DSSE envelope: the payload and its type, base64 in JSON,
// with one or more signatures over PAE(PayloadType, Payload).
type Envelope struct {
	PayloadType string      `json:"payloadType"`
	Payload     []byte      `json:"payload"` // base64 (standard) in JSON
	Signatures  []Signature `json:"signatures"`
}

// Signature is one signature of an envelope.
type Signature struct {
	KeyID string `json:"keyid,omitempty"`
	Sig   []byte `json:"sig"` // base64 (standard) in JSON
}

// PAE is DSSE's pre-authentication encoding of a payload and its type,
// the bytes that are signed.
func PAE(payloadType string, payload []byte) []byte {
	b := make([]byte, 0, 32+len(payloadType)+len(payload))
	b = append(b, "DSSEv1 "...)
	b = strconv.AppendInt(b, int64(len(payloadType)), 10)
	b = append(b, ' ')
	b = append(b, payloadType...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(payload)), 10)
	b = append(b, ' ')
	return append(b, payload...)
}

// Sign returns an envelope of payload signed by every key given.
func Sign(payloadType string, payload []byte, keys ...*PrivateKey) (*Envelope, error) {
	if payloadType == "" {
		return nil, errors.New("attest: empty payload type")
	}
	if len(keys) == 0 {
		return nil, errors.New("attest: no signing key")
	}
	env := &Envelope{PayloadType: payloadType, Payload: slices.Clone(payload)}
	for _, k := range keys {
		env.Signatures = append(env.Signatures, k.sign(payloadType, payload))
	}
	return env, nil
}

// AddSignature signs env again with k (another role or holder), keeping
// the signatures it has.
func (e *Envelope) AddSignature(k *PrivateKey) {
	e.Signatures = append(e.Signatures, k.sign(e.PayloadType, e.Payload))
}

func (k *PrivateKey) sign(payloadType string, payload []byte) Signature {
	return Signature{KeyID: k.ID, Sig: ed25519.Sign(k.key, PAE(payloadType, payload))}
}

// Verified is what Verify found: the ids of the distinct keys whose
// signature over the envelope is valid, in the order the keys were given.
type Verified struct {
	KeyIDs []string
}

// Has reports whether the key with id signed.
func (v Verified) Has(id string) bool { return slices.Contains(v.KeyIDs, id) }

// Count is how many of ids signed (each key counts once).
func (v Verified) Count(ids []string) int {
	n := 0
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if v.Has(id) {
			n++
		}
	}
	return n
}

// ErrNoValidSignature is returned by Verify when no given key signed.
var ErrNoValidSignature = errors.New("attest: no valid signature by any trusted key")

// Verify checks env's signatures against keys and returns the distinct
// keys that signed. A keyid in the envelope is only a hint: every
// signature is tried against every key. It fails with ErrNoValidSignature
// when none did, and when wantType is not empty and differs from the
// envelope's payload type.
func Verify(env *Envelope, wantType string, keys []PublicKey) (Verified, error) {
	if env == nil {
		return Verified{}, errors.New("attest: no envelope")
	}
	if wantType != "" && env.PayloadType != wantType {
		return Verified{}, fmt.Errorf("attest: payload type %q, want %q", env.PayloadType, wantType)
	}
	msg := PAE(env.PayloadType, env.Payload)
	var v Verified
	for _, k := range keys {
		if v.Has(k.ID) {
			continue
		}
		for _, s := range env.Signatures {
			if len(s.Sig) == ed25519.SignatureSize && ed25519.Verify(k.Key, msg, s.Sig) {
				v.KeyIDs = append(v.KeyIDs, k.ID)
				break
			}
		}
	}
	if len(v.KeyIDs) == 0 {
		return v, ErrNoValidSignature
	}
	return v, nil
}

// ParseEnvelope reads an envelope from JSON, strictly: unknown fields are
// an error, and so are a missing payload type or no signature.
func ParseEnvelope(data []byte) (*Envelope, error) {
	var env Envelope
	if err := decodeStrict(data, &env); err != nil {
		return nil, fmt.Errorf("attest: envelope: %w", err)
	}
	if env.PayloadType == "" {
		return nil, errors.New("attest: envelope: payloadType is missing")
	}
	if len(env.Signatures) == 0 {
		return nil, errors.New("attest: envelope: no signatures")
	}
	return &env, nil
}

// Marshal is the envelope's JSON, indented, with a final newline.
func (e *Envelope) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
