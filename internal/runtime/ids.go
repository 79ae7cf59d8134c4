package runtime

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// NewID returns prefix-<128 random bits in hex>.
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// BindingKey is a per-process secret that keys runtime bindings.
type BindingKey []byte

// NewBindingKey returns a fresh random key.
func NewBindingKey() BindingKey {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

const bindingPrefix = "fabric-runtime-binding-"

// Bind computes the runtime_binding of a handle: an HMAC-SHA256 over the
// handle's identity fields, so a handle cannot be forged or moved to another
// runtime without the process's key.
func (k BindingKey) Bind(h *contract.RuntimeHandle) string {
	m := hmac.New(sha256.New, k)
	for _, f := range []string{h.RuntimeID, h.Environment.EnvironmentID, h.AgentName, h.Harness, h.AdapterKind, h.AdapterID, h.Environment.Provider} {
		m.Write([]byte(f))
		m.Write([]byte{0})
	}
	if h.ServiceID != "" { // bound to a service: the binding covers it too
		m.Write([]byte("service\x00" + h.ServiceID))
	}
	return bindingPrefix + hex.EncodeToString(m.Sum(nil)[:20])
}

// Verify reports whether h carries the binding this key gives it.
func (k BindingKey) Verify(h *contract.RuntimeHandle) bool {
	if !strings.HasPrefix(h.RuntimeBinding, bindingPrefix) {
		return false
	}
	return hmac.Equal([]byte(h.RuntimeBinding), []byte(k.Bind(h)))
}
