// Package relay receives NeMo Relay's ATOF records and correlates them to
// Fabric turns.
//
// A Listener is a loopback HTTP server that accepts POST /atof with
// newline-delimited JSON bodies (chunked or sized, with Expect:
// 100-continue), the endpoint upstream NeMo Fabric opens for Relay's
// "nemo-fabric-stream" ATOF stream sink. SinkConfig and InjectSink produce
// the sink that points a runtime's Relay at the listener. BeginTurn opens
// one turn of one runtime: records are admitted to it by request id, turn
// index and parent chains, turned into contract.FabricEvent values and
// handed to the turn's sink in order; Turn.End reports how many records
// were correlated, uncorrelated, dropped, malformed and oversized.
// docs/relay.md describes the HTTP rules, limits and correlation rules.
//
// What relay must never do:
//   - hold memory without bound: a record is at most Options.MaxRecordBytes,
//     a turn buffers at most Options.MaxRecords records and
//     Options.MaxBytes bytes, and the body parser reads at most one record
//     plus one read buffer before deciding;
//   - lose a record silently: every record that is not delivered is counted
//     in the turn's Stats or the listener's ListenerStats;
//   - listen beyond loopback unless told to, and then only with a token;
//   - log or return a secret: the token travels in the adapter host's
//     environment only (SinkConfig.Env), never in the sink document, and
//     record contents are never logged;
//   - name a harness: correlation uses Relay metadata conventions only;
//   - leave a goroutine behind: Turn.End joins the turn's delivery goroutine
//     and Listener.Close joins the server and every handler.
package relay
