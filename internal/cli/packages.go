package cli

import "github.com/spf13/cobra"

// packagesCommand is `fabric packages`: runtime packages, the support
// catalog that lists them and the qualification receipts it cites. Each
// verb lives in its own packages_*.go file.
func (a *app) packagesCommand() *cobra.Command {
	return a.group(&cobra.Command{
		Use:   "packages",
		Short: "Install, verify and qualify runtime packages; read and sign the support catalog",
	}, func(cmd *cobra.Command) {
		for _, sub := range [][]*cobra.Command{
			// one line per packages_*.go file
			a.packagesReadCommands(), // packages_read.go: digest, show, list, verify
			a.packagesCatalogCommands(),
			a.packagesOpCommands(),
			a.packagesInstallCommands(),
			a.packagesQualifyCommands(),
			{a.packagesAuditCommand()}, // packages_audit.go
		} {
			cmd.AddCommand(sub...)
		}
	})
}
