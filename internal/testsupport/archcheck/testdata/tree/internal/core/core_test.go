package core

const inTest = "codex" // test files are never counted
