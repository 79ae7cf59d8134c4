// Package adaptertest tests a Go adapter live: its harness driven by the
// real Fabric core against a scripted model endpoint, with this test
// binary as the adapter host. A third-party adapter author, like each of
// Fabric's own adapters, writes
//
//	func TestMain(m *testing.M) {
//		adaptertest.Main(m, adaptertest.Serve(myadapter.ID, myadapter.New()))
//	}
//
//	func TestTurn(t *testing.T) {
//		r := adaptertest.New(t, adaptertest.Options{
//			Script:      &modelstub.Script{Default: &modelstub.Reply{Text: "4"}},
//			Descriptors: map[string][]byte{"my.fabric-adapter.json": myadapter.Descriptor},
//			Path:        []string{"/where/the/harness/is"},
//		})
//		rt := r.Start(r.Config(adaptertest.Doc{AdapterID: myadapter.ID, Model: "m"}))
//		res := r.Invoke(rt, "What is 2+2?")
//		r.CheckOffline()
//		...
//	}
//
// Main lets the test binary be the adapter host the core re-executes for
// each runtime (the descriptor's runner.builtin names the adapter). A Rig
// is one test's world: a descriptor directory for discovery, the scripted
// model endpoint (package modelstub) expecting a fresh key, a sentinel
// HTTP(S) proxy that records any attempt of the harness to reach another
// host, private state and workspace directories, and a fabric.Client
// whose hosts run this test binary with that environment.
//
// What this package must never do:
//   - be linked by a program that is not a test (internal/testsupport/deptest checks
//     that fabric-host, fabric-agent-ctl, adapterkit and the SDK do not);
//   - reach a network beyond loopback, or hand a harness any key or
//     endpoint but the rig's;
//   - hold knowledge of one harness: what an adapter's tests need beyond
//     this (where its binary is, how it names its processes) stays in them;
//   - print the model key (it is recorded for the token scan instead).
package adaptertest
