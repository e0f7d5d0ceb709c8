package cli

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/atomicfile"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// GatewaySessionKeyOptions are the inputs of `switchboard gateway
// session-key add` and `promote`.
type GatewaySessionKeyOptions struct {
	IO   *IOStreams
	File string
	// Next puts the new key second (add --next): it opens IDs at once and
	// seals only once promoted.
	Next bool
}

func newGatewaySessionKeyCmd(f *Factory) *cobra.Command {
	sk := &cobra.Command{Use: "session-key", Short: "Make and rotate the key file of a scale-out gateway (serve --session-key-file)"}
	sk.AddCommand(newGatewaySessionKeyAddCmd(f), newGatewaySessionKeyPromoteCmd(f))
	return sk
}

func newGatewaySessionKeyAddCmd(f *Factory) *cobra.Command {
	o := &GatewaySessionKeyOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "add FILE",
		Short: "Put a new random key first in FILE (created with mode 0600)",
		Long: `Write a new random 32-byte key as the first line of FILE, creating it with mode
0600 if needed. serve --stateless --session-key-file FILE seals session IDs
with the first key and opens them with every key, so the keys already in FILE
keep opening the IDs they sealed. Running instances read the file again when it
changes: no restart.

To rotate when every instance reads this very file (a shared volume): run this
once; each instance seals with the new key from then on. When each instance has
a copy that is updated at its own time (a Kubernetes Secret, within about a
minute): add the key with --next (it opens at once, seals nothing), ship the
file, wait until every instance has it, then 'session-key promote' and ship
again. Once the sessions of the old key are gone, delete its line.`,
		Example: `  switchboard gateway session-key add ./session-keys
  switchboard gateway session-key add --next ./session-keys && switchboard gateway session-key promote ./session-keys
  kubectl create secret generic switchboard-gateway-token --from-file=token --from-file=session-keys`,
		Args: exactArgs(1, "the key file, e.g. ./session-keys"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = f.abs(args[0])
			return gatewaySessionKeyAddRun(o)
		},
	}
	cmd.Flags().BoolVar(&o.Next, "next", false, "put the new key second: it opens IDs at once and seals once promoted ('session-key promote')")
	return cmd
}

func newGatewaySessionKeyPromoteCmd(f *Factory) *cobra.Command {
	o := &GatewaySessionKeyOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "promote FILE",
		Short: "Make FILE's second key the first, the one that seals",
		Long: `Move the second key of FILE before the first, so that it seals new session IDs;
the old first key stays, second, and keeps opening the IDs it sealed. The second
step of a rotation begun with 'session-key add --next', once every instance has
the key.`,
		Args: exactArgs(1, "the key file, e.g. ./session-keys"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = f.abs(args[0])
			return gatewaySessionKeyPromoteRun(o)
		},
	}
}

// readKeyFile reads a key file with the checks serve makes (mode, a key
// per line) before anything is written, and returns its lines and the
// indexes of its key lines; a missing file holds none.
func readKeyFile(path string) (lines []string, keys []int, err error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, FailureErr(fmt.Errorf("reading %s: %w", path, err), "")
	}
	if err := gateway.CheckSessionKeyFileMode(path, fi); err != nil {
		return nil, nil, sessionKeyErr(path, err)
	}
	b, err := safefile.ReadFile(path)
	if err != nil {
		return nil, nil, FailureErr(fmt.Errorf("reading %s: %w", path, err), "")
	}
	if _, err := gateway.ParseSessionKeys(path, b); err != nil {
		return nil, nil, sessionKeyErr(path, err)
	}
	lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) == 0 {
		lines = nil
	}
	for i, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			keys = append(keys, i)
		}
	}
	return lines, keys, nil
}

func writeKeyFile(path string, lines []string) error {
	if err := atomicfile.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return FailureErr(err, "")
	}
	return nil
}

func gatewaySessionKeyAddRun(o *GatewaySessionKeyOptions) error {
	lines, keys, err := readKeyFile(o.File)
	if err != nil {
		return err
	}
	if o.Next && len(keys) == 0 {
		return Usagef("run it without --next: with no key yet, the new one seals at once", "--next puts the new key after the first one, and %s holds none", o.File)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return FailureErr(fmt.Errorf("no randomness: %w", err), "")
	}
	line := base64.StdEncoding.EncodeToString(key)
	if o.Next {
		// Second: it opens at once everywhere the file is read, and seals
		// nothing until promoted.
		at := keys[0] + 1
		lines = slices.Insert(lines, at, line)
	} else {
		// First (it seals), the old lines kept after it.
		lines = slices.Insert(lines, 0, line)
	}
	if err := writeKeyFile(o.File, lines); err != nil {
		return err
	}
	switch {
	case o.Next:
		fmt.Fprintf(o.IO.ErrOut, "Added a new session key to %s, second: running instances open IDs sealed with it as soon as they have the file, and still seal with the first. Once every instance has it: switchboard gateway session-key promote %s\n", o.File, o.File)
	case len(keys) > 0:
		fmt.Fprintf(o.IO.ErrOut, "Added a new session key to %s: running instances seal with it as soon as they have the file (no restart); the %d older key(s) still open the IDs they sealed (delete their lines once those sessions are gone).\n", o.File, len(keys))
	default:
		fmt.Fprintf(o.IO.ErrOut, "Wrote a session key to %s (mode 0600). Give the same file to every instance: serve --http ADDR --stateless --session-key-file %s\n", o.File, o.File)
	}
	return nil
}

func gatewaySessionKeyPromoteRun(o *GatewaySessionKeyOptions) error {
	lines, keys, err := readKeyFile(o.File)
	if err != nil {
		return err
	}
	if len(keys) < 2 {
		return Usagef("add one with: switchboard gateway session-key add --next "+o.File, "%s holds %d key(s): there is no second key to promote", o.File, len(keys))
	}
	lines[keys[0]], lines[keys[1]] = lines[keys[1]], lines[keys[0]]
	if err := writeKeyFile(o.File, lines); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "The second session key of %s is now first: running instances seal with it as soon as they have the file; the old first key, now second, still opens the IDs it sealed (delete its line once those sessions are gone).\n", o.File)
	return nil
}
