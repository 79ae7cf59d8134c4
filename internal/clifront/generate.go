package clifront

//go:generate go test -run ^TestTreeIsCurrent$ . -args -update
