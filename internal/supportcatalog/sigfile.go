package supportcatalog

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fabric-runtime/fabric/internal/attest"
)

// SignatureFile is a detached DSSE signature (NNNNNN.sig.json,
// trust.sig.json): the envelope without its payload, which is the exact
// bytes of the file it sits beside. The envelope is rebuilt to verify, so
// the signed JSON stays readable in a diff.
type SignatureFile struct {
	PayloadType string             `json:"payloadType"`
	Signatures  []attest.Signature `json:"signatures"`
}

// ParseSignatureFile reads a detached signature strictly.
func ParseSignatureFile(data []byte) (*SignatureFile, error) {
	var s SignatureFile
	if err := decodeStrict(data, &s); err != nil {
		return nil, err
	}
	if s.PayloadType == "" {
		return nil, errors.New("payloadType is missing")
	}
	return &s, nil
}

// Marshal is the signature file's JSON, indented, with a final newline.
func (s *SignatureFile) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

// Sign adds k's signature over payload to s (a nil s starts a new file
// of payloadType) and returns it.
func Sign(s *SignatureFile, payloadType string, payload []byte, k *attest.PrivateKey) (*SignatureFile, error) {
	if s == nil {
		s = &SignatureFile{PayloadType: payloadType}
	}
	if s.PayloadType != payloadType {
		return nil, fmt.Errorf("signature file has payloadType %q, want %q", s.PayloadType, payloadType)
	}
	env, err := attest.Sign(payloadType, payload, k)
	if err != nil {
		return nil, err
	}
	s.Signatures = append(s.Signatures, env.Signatures...)
	return s, nil
}

// verify returns the distinct keys among keys that signed payload.
func (s *SignatureFile) verify(payloadType string, payload []byte, keys []attest.PublicKey) (attest.Verified, error) {
	if len(s.Signatures) == 0 {
		return attest.Verified{}, attest.ErrNoValidSignature
	}
	return attest.Verify(&attest.Envelope{PayloadType: s.PayloadType, Payload: payload, Signatures: s.Signatures}, payloadType, keys)
}
