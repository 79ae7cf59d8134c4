// Package harnessui runs a runtime's harness interfaces (dashboards, APIs,
// terminal UIs) under Fabric's interfaces contract, written once for every
// adapter. Rule ids (S1-S9 settings, L1-L7 lifecycle, P1-P5 paths, T1-T4
// credentials, A1-A4 access, C1-C4 configuration, Q1-Q9 resolved
// questions) are defined in docs/design/interfaces.md, Fabric's statement
// of the contract; internal/testsupport/doccheck fails on an id it does not define.
//
// Three parts:
//
//   - Settings. harness.settings.interfaces is an object of named
//     interfaces (S1), and startup_timeout_seconds is one deadline for all
//     of start (L3). The JSON Schema for both is defined once
//     (fragment.json) and generated into each descriptor's settings_schema
//     from the descriptor's "interfaces" declarations by
//     `go generate ./adapterkit/harnessui` (UpdateDescriptor); CheckDescriptor,
//     run by this package's tests over adapters/*/, fails when a copy
//     differs (S8). ParseSettings decodes the settings in the adapter.
//     The fragment's description still names this package's old path,
//     ./adapterkit/iface: the text is in the published OpenClaw and
//     OpenCode package descriptors, whose digests the signed catalog
//     pins, so it changes with those packages' next version.
//   - Start and Stop. Start launches the HTTP interfaces' children
//     concurrently under one deadline and enforces the port, token and file
//     rules (S2, S3, L2, L3, L6, T1, A1, C3); Set.Stop removes token files
//     and markers, then stops each child's process group (L5). Terminal
//     interfaces get a launcher script and a marker (P4, A3).
//   - Discovery and health. Set.Interfaces is what the runtime handle
//     reports (contract.InterfaceInfo: locations and credential file
//     paths, never a credential); Set.Check answers live, active and ready
//     for one interface without touching the runtime's own check (L4).
//
// Files, under the runtime's artifact root (P1, ArtifactRoot):
//
//	.fabric/<adapter>/runtimes/<runtime-id>/interfaces/<name>.token    0600, per-start token (P3)
//	.fabric/<adapter>/runtimes/<runtime-id>/interfaces/<name>          terminal launcher, 0700 (P4)
//	.fabric/<adapter>/runtimes/<runtime-id>/interfaces/<name>.running  terminal marker, 0600 (P4)
//
// Tokens, launchers and markers are written only after every child passed
// health (T1, Q1); a failed start leaves none (L2); Stop removes tokens and
// markers before the first signal and keeps launchers, which refuse to run
// without their marker. If the adapter host is killed (L7), children die
// with it (Pdeathsig, see proc) but nothing removes the token
// files, launchers and markers; processes the children started in other
// process groups or sessions are not tracked.
//
// Usage, in an adapter's Start (the OpenClaw gateway serving the Control
// UI as interface "dashboard"):
//
//	var desc contract.AdapterDescriptor // the adapter's embedded descriptor
//	_ = json.Unmarshal(descriptorJSON, &desc)
//	settings, err := harnessui.ParseSettings(in.Config.Harness.Settings, desc.Interfaces)
//	if err != nil {
//		return nil, err
//	}
//	var children []harnessui.Child
//	if dash, on := settings.Enabled("dashboard"); on {
//		children = append(children, harnessui.Child{
//			Name: "dashboard", Kind: contract.InterfaceHTTP, Browser: true,
//			Credential: contract.CredentialBearer, TokenEnv: "OPENCLAW_GATEWAY_TOKEN",
//			Port: dash.Port, CheckPorts: []int{dash.Port + 2},
//			Command: node, Args: []string{openclaw, "gateway", "run", "--port", strconv.Itoa(dash.Port)},
//			Env: env, HealthPath: "/healthz", ReadyPath: "/v1/models",
//		})
//	}
//	set, err := harnessui.Start(ctx, harnessui.Spec{
//		RuntimeID: in.RuntimeContext.RuntimeID, ArtifactRoot: harnessui.ArtifactRoot(in),
//		AdapterName: "openclaw", StartupTimeout: settings.StartupTimeout, Children: children,
//	})
//	if err != nil {
//		return nil, err // *harnessui.Error, also an *adapterkit.Error with a stable code
//	}
//	token := set.Token("dashboard") // for the adapter's own API calls; never log it
//	report := set.Interfaces()      // for the runtime handle
//	// ... and in Session.Stop: set.Stop(ctx)
//
// Error codes (Code* constants) are stable: interface_invalid,
// interface_ports_equal, interface_port_taken, interface_not_loopback,
// interface_launch_failed, interface_child_exited, interface_start_timeout,
// interface_start_cancelled, interface_files_failed, interface_stop_failed.
//
// What harnessui must never do: put a credential in a handle, report, error,
// log line, launcher, marker or command line (T1); write a token or marker
// before every child passed health, or leave one after a failed start
// (Q1, L2); choose a port other than the one given (L6); signal a process
// it did not start; restart an interface (L4). Process supervision and the
// ownership check are Linux-only (proc); elsewhere Start fails.
package harnessui
