package cli

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
	"github.com/switchboard-mcp/switchboard/internal/atomicfile"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// GatewaySessionKeyOptions are the inputs of `switchboard gateway
// session-key add`.
type GatewaySessionKeyOptions struct {
	IO   *IOStreams
	File string
}

func newGatewaySessionKeyCmd(f *Factory) *cobra.Command {
	sk := &cobra.Command{Use: "session-key", Short: "Make and rotate the key file of a scale-out gateway (serve --session-key-file)"}
	sk.AddCommand(newGatewaySessionKeyAddCmd(f))
	return sk
}

func newGatewaySessionKeyAddCmd(f *Factory) *cobra.Command {
	o := &GatewaySessionKeyOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "add FILE",
		Short: "Put a new random key first in FILE (created with mode 0600)",
		Long: `Write a new random 32-byte key as the first line of FILE, creating it with mode
0600 if needed. serve --stateless --session-key-file FILE seals session IDs
with the first key and opens them with every key, so the keys already in FILE
keep opening the IDs they sealed. To rotate: run this once, give the same file
to every instance and restart them one by one; once the sessions of the old key
are gone, delete its line.`,
		Example: `  switchboard gateway session-key add ./session-keys
  kubectl create secret generic switchboard-gateway-token --from-file=token --from-file=session-keys`,
		Args: exactArgs(1, "the key file, e.g. ./session-keys"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = f.abs(args[0])
			return gatewaySessionKeyAddRun(o)
		},
	}
}

func gatewaySessionKeyAddRun(o *GatewaySessionKeyOptions) error {
	// The checks serve makes (mode, a key per line), before anything is
	// written; a file with no key yet is fine.
	var old []byte
	older := 0
	fi, err := os.Stat(o.File)
	switch {
	case errors.Is(err, fs.ErrNotExist): // a new file
	case err != nil:
		return FailureErr(fmt.Errorf("reading %s: %w", o.File, err), "")
	default:
		if err := sessionKeyFileMode(o.File, fi); err != nil {
			return err
		}
		if old, err = safefile.ReadFile(o.File); err != nil {
			return FailureErr(fmt.Errorf("reading %s: %w", o.File, err), "")
		}
		ks, err := parseSessionKeys(o.File, old)
		if err != nil {
			return err
		}
		older = len(ks.aeads)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return FailureErr(fmt.Errorf("no randomness: %w", err), "")
	}
	// The new key first (it seals), the old lines kept after it.
	data := append([]byte(base64.StdEncoding.EncodeToString(key)+"\n"), old...)
	if err := atomicfile.WriteFile(o.File, data, 0o600); err != nil {
		return FailureErr(err, "")
	}
	if older > 0 {
		fmt.Fprintf(o.IO.ErrOut, "Added a new session key to %s: it seals from each instance's next start; the %d older key(s) still open the IDs they sealed (delete their lines once those sessions are gone).\n", o.File, older)
	} else {
		fmt.Fprintf(o.IO.ErrOut, "Wrote a session key to %s (mode 0600). Give the same file to every instance: serve --http ADDR --stateless --session-key-file %s\n", o.File, o.File)
	}
	return nil
}
