package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"

	"github.com/fabric-runtime/fabric/modelstub"
)

// servedStub is the model endpoint a run serves for its profile.
type servedStub struct {
	*modelstub.Server
	scriptSHA256 string
}

// serveModelStub serves the profile's modelstub script on a free loopback
// port and returns the profile with every model role of its base config
// pointed at it (the caller's profile is not changed).
func serveModelStub(p Profile) (*servedStub, Profile, error) {
	data, err := os.ReadFile(p.ModelStub)
	if err != nil {
		return nil, p, fmt.Errorf("modelstub: %w", err)
	}
	script, err := modelstub.ParseScript(data)
	if err != nil {
		return nil, p, fmt.Errorf("modelstub %s: %w", p.ModelStub, err)
	}
	sum := sha256.Sum256(data)
	stub := &servedStub{Server: modelstub.New(script), scriptSHA256: hex.EncodeToString(sum[:])}
	p.Base = maps.Clone(p.Base)
	if p.Base == nil {
		p.Base = map[string]any{}
	}
	models, _ := p.Base["models"].(map[string]any)
	models = maps.Clone(models)
	if models == nil {
		models = map[string]any{}
	}
	for role, v := range models {
		m, _ := v.(map[string]any)
		m = maps.Clone(m)
		if m == nil {
			m = map[string]any{}
		}
		m["base_url"] = stub.baseURL(p.ModelStubAPI)
		models[role] = m
	}
	p.Base["models"] = models
	return stub, p, nil
}

// baseURL is the endpoint's base URL for an API family (the profile's
// modelstub_api, checked when it was read).
func (s *servedStub) baseURL(api string) string {
	u, _ := s.BaseURLFor(api)
	return u
}
