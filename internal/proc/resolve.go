//go:build !windows

package proc

// ResolveCommand returns the program and arguments to run for a configured
// command. Outside Windows it returns them unchanged. Start applies it, so
// callers need not; it is idempotent.
func ResolveCommand(cmd string, args []string) (string, []string) { return cmd, args }
