package cli

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
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
	old, err := os.ReadFile(o.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return FailureErr(fmt.Errorf("reading %s: %w", o.File, err), "")
	default:
		if fi, err := os.Stat(o.File); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return Usagef("chmod 600 "+o.File+", then run this again", "%s is readable by others (mode %04o): its keys open every session's ID", o.File, fi.Mode().Perm())
		}
		if _, err := readSessionKeys(o.File); err != nil && !strings.Contains(err.Error(), "holds no key") {
			return err // a line that is not a key: say which before writing
		}
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return FailureErr(fmt.Errorf("no randomness: %w", err), "")
	}
	line := base64.StdEncoding.EncodeToString(key) + "\n"
	// Written beside it and renamed over it: a crash leaves the old file.
	tmp, err := os.CreateTemp(filepath.Dir(o.File), ".session-keys-*")
	if err != nil {
		return FailureErr(fmt.Errorf("writing %s: %w", o.File, err), "")
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.WriteString(line + string(old))
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), o.File)
		}
		if err != nil {
			return FailureErr(fmt.Errorf("writing %s: %w", o.File, err), "")
		}
	} else {
		tmp.Close()
		return FailureErr(fmt.Errorf("writing %s: %w", o.File, err), "")
	}
	ks, err := readSessionKeys(o.File)
	if err != nil {
		return err
	}
	if n := len(ks.aeads) - 1; n > 0 {
		fmt.Fprintf(o.IO.ErrOut, "Added a new session key to %s: it seals from each instance's next start; the %d older key(s) still open the IDs they sealed (delete their lines once those sessions are gone).\n", o.File, n)
	} else {
		fmt.Fprintf(o.IO.ErrOut, "Wrote a session key to %s (mode 0600). Give the same file to every instance: serve --http ADDR --stateless --session-key-file %s\n", o.File, o.File)
	}
	return nil
}
