package receipt

import "github.com/fabric-runtime/fabric/contract"

// Statement is a qualification receipt's payload.
type Statement = contract.QualificationStatement

// Subject names of the statement (besides the artifacts').
const (
	SubjectDescriptor = "adapter-descriptor"
	SubjectHost       = "fabric-host"
)

// PackageSubject is the subject name of a package release.
func PackageSubject(id, version string) string { return "package:" + id + "@" + version }

// ArtifactSubject is the subject name of an artifact: kind:name@version
// (npm:@scope/pkg@1.2.3).
func ArtifactSubject(a contract.PackageArtifact) string {
	return a.Kind + ":" + a.Name + "@" + a.Version
}
