package contract

import "time"

// TrustV1Alpha1 is the _type of a trust root (catalog/trust.json).
const TrustV1Alpha1 = "fabric.trust/v1alpha1"

// CatalogV1Alpha1 is the _type of a support catalog version.
const CatalogV1Alpha1 = "fabric.catalog/v1alpha1"

// Payload types of the detached DSSE signatures over a trust root and a
// catalog version's exact file bytes.
const (
	TrustPayloadType   = "application/vnd.fabric.trust.v1+json"
	CatalogPayloadType = "application/vnd.fabric.catalog.v1+json"
)

// Trust (catalog/trust.json) is the root of trust of a support catalog:
// the public keys, and which keys hold each role with how many of them
// must sign. It is signed by its own root role (trust.sig.json).
type Trust struct {
	Type    string              `json:"_type" jsonschema:"enum=fabric.trust/v1alpha1"`
	Version int                 `json:"version" jsonschema:"minimum=1"`
	Expires time.Time           `json:"expires"`
	Keys    map[string]TrustKey `json:"keys" jsonschema:"minProperties=1"`
	Roles   TrustRoles          `json:"roles"`
}

// TrustKey is one public key of a trust root, keyed by its id (the hex
// sha256 of the raw public key).
type TrustKey struct {
	Alg    string `json:"alg" jsonschema:"enum=ed25519"`
	Public []byte `json:"public"` // the raw 32-byte key, base64 in JSON
}

// TrustRoles are the five roles of a trust root.
type TrustRoles struct {
	Root      TrustRole `json:"root"`
	Catalog   TrustRole `json:"catalog"`
	Revoker   TrustRole `json:"revoker"`
	Qualifier TrustRole `json:"qualifier"`
	Publisher TrustRole `json:"publisher"`
}

// TrustRole is a role's keys and how many distinct ones must sign.
type TrustRole struct {
	KeyIDs    []string `json:"keyids"`
	Threshold int      `json:"threshold" jsonschema:"minimum=1"`
}

// Support states of a catalog entry.
const (
	StateCandidate  = "candidate"
	StateCompatible = "compatible"
	StateSupported  = "supported"
	StateSuperseded = "superseded"
	StateRevoked    = "revoked"
)

// Revocation policies for running deployments.
const (
	RunningContinue = "continue"
	RunningDrain    = "drain"
	RunningStop     = "stop"
)

// SupportCatalog is one immutable version of the support catalog
// (catalog/versions/NNNNNN.json): the package releases Fabric may select,
// pinned by digest, with their support state. Version N names the sha256
// of version N-1's exact bytes (Previous), so the versions form a chain.
type SupportCatalog struct {
	Type     string     `json:"_type" jsonschema:"enum=fabric.catalog/v1alpha1"`
	Serial   int        `json:"serial" jsonschema:"minimum=1"`
	Previous *DigestSet `json:"previous"`
	Issued   time.Time  `json:"issued"`
	Expires  time.Time  `json:"expires"`
	// Contracts lists the contract versions the entries use.
	Contracts map[string][]string `json:"contracts,omitempty"`
	// Defaults maps a package id to the entry selected when only the id
	// is asked for.
	Defaults map[string]string `json:"defaults"`
	Entries  []CatalogEntry    `json:"entries"`
}

// DigestSet is a sha256 digest, hex.
type DigestSet struct {
	SHA256 string `json:"sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
}

// CatalogEntry is one package release in the catalog. Its name (Entry) is
// id@version; everything but the state, its dates, the receipts and the
// revocation is fixed once listed.
type CatalogEntry struct {
	Entry         string                       `json:"entry" jsonschema:"minLength=3"`
	Package       CatalogPackage               `json:"package"`
	PackageDigest DigestSet                    `json:"package_digest"`
	Descriptor    DigestSet                    `json:"descriptor"`
	Runtime       PackageRuntime               `json:"runtime"`
	Source        *PackageSource               `json:"source,omitempty"`
	Artifacts     map[string][]CatalogArtifact `json:"artifacts" jsonschema:"minProperties=1"`
	Requires      *PackageRequires             `json:"requires,omitempty"`
	// Receipts is, per platform, the sha256 of the qualification receipt
	// envelope (catalog/receipts/sha256-<hex>.intoto.json).
	Receipts map[string]CatalogReceipt `json:"receipts,omitempty"`
	State    string                    `json:"state" jsonschema:"enum=candidate,enum=compatible,enum=supported,enum=superseded,enum=revoked"`
	// Since is the date (YYYY-MM-DD) the entry entered its state.
	Since string `json:"since" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
	// RequalifyBy is the date after which the entry counts as a candidate.
	RequalifyBy string `json:"requalify_by,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
	// Reason says why the state changed (required for supported -> compatible).
	Reason       string             `json:"reason,omitempty"`
	SupersededBy string             `json:"superseded_by,omitempty"`
	Sunset       string             `json:"sunset,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
	Revocation   *CatalogRevocation `json:"revocation,omitempty"`
}

// CatalogPackage is the package identity an entry pins.
type CatalogPackage struct {
	ID        string `json:"id" jsonschema:"minLength=1,pattern=^[a-z0-9][a-z0-9._-]*$"`
	Version   string `json:"version" jsonschema:"minLength=1,pattern=^[A-Za-z0-9][A-Za-z0-9._+-]*$"`
	Publisher string `json:"publisher" jsonschema:"minLength=1"`
	Contract  string `json:"contract" jsonschema:"minLength=1"`
}

// CatalogArtifact is one artifact of a platform and its registry digest.
type CatalogArtifact struct {
	Name   string            `json:"name" jsonschema:"minLength=1"`
	Digest map[string]string `json:"digest" jsonschema:"minProperties=1"`
}

// CatalogReceipt is the qualification receipt of one platform: the
// sha256 of its envelope file and what the qualifier observed.
type CatalogReceipt struct {
	SHA256 string `json:"sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
	// ObservedAll is true when every item with an observable
	// postcondition was observed and agreed (required for supported).
	ObservedAll bool `json:"observed_all,omitempty"`
}

// CatalogRevocation says why an entry was revoked and what happens to
// deployments that run it.
type CatalogRevocation struct {
	Reason   string      `json:"reason" jsonschema:"enum=security,enum=digest_mismatch,enum=receipt_invalid,enum=upstream_yanked,enum=key_compromise,enum=contract_broken"`
	Running  string      `json:"running" jsonschema:"enum=continue,enum=drain,enum=stop"`
	Evidence []DigestSet `json:"evidence" jsonschema:"minItems=1"`
}
