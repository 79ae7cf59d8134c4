package acp

// Names the external tests use that the package does not export.
const EnvProfile = envProfile

var Bundled = bundledProfile
