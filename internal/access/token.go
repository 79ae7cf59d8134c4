package access

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"hash/crc32"
	"strings"
)

// Token format: faba_<key id: 12 base62>_<secret: 43 base62><crc32: 6 base62>.
// The key id finds the grant without a scan; the checksum lets the gateway
// (and secret scanners) reject look-alikes without a store lookup; only the
// key id may ever be logged.
const (
	tokenPrefix = "faba_"
	keyIDLen    = 12
	secretLen   = 43 // 43 base62 characters carry 256 bits
	crcLen      = 6
	tokenLen    = len(tokenPrefix) + keyIDLen + 1 + secretLen + crcLen
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randBase62 returns n uniformly random base62 characters from crypto/rand.
func randBase62(n int) string {
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if b < 248 { // 248 = 4*62: no modulo bias
				out = append(out, base62[b%62])
				if len(out) == n {
					break
				}
			}
		}
	}
	return string(out)
}

// crc6 encodes the CRC32 of s in 6 base62 characters (62^6 > 2^32).
func crc6(s string) string {
	v := uint64(crc32.ChecksumIEEE([]byte(s)))
	var b [crcLen]byte
	for i := crcLen - 1; i >= 0; i-- {
		b[i] = base62[v%62]
		v /= 62
	}
	return string(b[:])
}

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// newToken makes a key id and its token.
func newToken() (keyID, secret, token string) {
	keyID, secret = randBase62(keyIDLen), randBase62(secretLen)
	body := tokenPrefix + keyID + "_" + secret
	return keyID, secret, body + crc6(body)
}

// parseToken splits a token into key id and secret; ok is false for
// anything that is not a well-formed token with a valid checksum.
func parseToken(tok string) (keyID, secret string, ok bool) {
	if len(tok) != tokenLen || !strings.HasPrefix(tok, tokenPrefix) {
		return "", "", false
	}
	rest := tok[len(tokenPrefix):]
	if rest[keyIDLen] != '_' {
		return "", "", false
	}
	keyID, secret, sum := rest[:keyIDLen], rest[keyIDLen+1:keyIDLen+1+secretLen], rest[keyIDLen+1+secretLen:]
	if !isBase62(keyID) || !isBase62(secret) || !isBase62(sum) {
		return "", "", false
	}
	if subtle.ConstantTimeCompare([]byte(crc6(tok[:len(tok)-crcLen])), []byte(sum)) != 1 {
		return "", "", false
	}
	return keyID, secret, true
}

// bearer extracts the token of an Authorization header value.
func bearer(h string) string {
	const p = "bearer "
	if len(h) > len(p) && strings.EqualFold(h[:len(p)], p) {
		return strings.TrimSpace(h[len(p):])
	}
	return ""
}

// verifier is what the store keeps of a token's secret.
func verifier(pepper []byte, keyID, secret string) []byte {
	m := hmac.New(sha256.New, pepper)
	m.Write([]byte("faba-verifier\x00" + keyID + "\x00" + secret))
	return m.Sum(nil)
}

// scoped hashes parts under the gateway's key (idempotency scopes,
// conversation ids) so that low-entropy inputs reveal nothing.
func scoped(pepper []byte, parts ...string) string {
	m := hmac.New(sha256.New, pepper)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	const hexd = "0123456789abcdef"
	sum := m.Sum(nil)
	out := make([]byte, 2*len(sum))
	for i, b := range sum {
		out[2*i], out[2*i+1] = hexd[b>>4], hexd[b&15]
	}
	return string(out)
}
