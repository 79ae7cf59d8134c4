package pi

// What the external tests (package pi_test) use of the package's
// unexported names. They stay external because they start runtimes
// through harnesstest and adapters/bundled, which import this package.
var ResolveBinary = resolveBinary
