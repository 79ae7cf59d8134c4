package data

const inTestdata = "codex" // testdata is never counted
