package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// MemberKeyEnv holds a team member's gateway key for `gateway secret`.
const MemberKeyEnv = "SWITCHBOARD_GATEWAY_KEY"

// GatewaySecretOptions are the inputs of `switchboard gateway secret …`.
type GatewaySecretOptions struct {
	IO      *IOStreams
	URL     string
	KeyFile string
	Name    string
	Getenv  func(string) (string, bool)
	Remove  bool
}

func newGatewaySecretCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Set your own value of a team gateway's per-member secret",
		Long: `A team gateway may call some servers as each member, with the member's own
values of their secrets (docs/gateway.md, Each member's own credentials).
"gateway secret set NAME" sends yours to the running gateway, which keeps it in
its credential store under your principal; your key (or access token) comes
from $` + MemberKeyEnv + ` or --key-file. The value is typed at a prompt without
echo or piped on stdin, never given as an argument, and never read back.`,
		Args: cobra.ArbitraryArgs,
		RunE: groupRunE,
	}
	for _, remove := range []bool{false, true} {
		o := &GatewaySecretOptions{IO: f.IO, Getenv: f.Getenv, Remove: remove}
		use, short := "set NAME", "Send your own value of secret NAME to the gateway"
		if remove {
			use, short = "rm NAME", "Remove your own value of secret NAME from the gateway"
		}
		sub := &cobra.Command{
			Use:   use,
			Short: short,
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) != 1 {
					return Usagef("e.g. gh auth token | switchboard gateway secret set GITHUB_TOKEN --url https://gw.example.com", "gateway secret %s takes one NAME (the value comes from a prompt or stdin)", cmd.Name())
				}
				return secretName(args[0])
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				o.Name = args[0]
				return gatewaySecretRun(cmd.Context(), o)
			},
		}
		sub.Flags().StringVar(&o.URL, "url", "", "the gateway's `URL` (https://…, or http:// on a loopback address; /mcp may end it)")
		sub.Flags().StringVar(&o.KeyFile, "key-file", "", "read your gateway key or access token from `FILE` (else $"+MemberKeyEnv+")")
		cmd.AddCommand(sub)
	}
	return cmd
}

// memberSecretURL is the gateway's URL of secret name, from --url: https,
// or http on a loopback host only, since the request carries a key and a
// secret.
func memberSecretURL(raw, name string) (string, error) { return memberURL(raw, MemberSecretsPath+name) }

// loopbackHost reports whether a url's host (no port) is this machine:
// localhost or a loopback address.
func loopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

// memberURL is the gateway's URL of path, from --url (see memberSecretURL).
func memberURL(raw, path string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", Usagef("e.g. --url https://gw.example.com", "--url %q is not a gateway's http(s) URL", raw)
	}
	if u.Scheme == "http" {
		if !loopbackHost(u.Hostname()) {
			return "", Usagef("use the gateway's https:// URL", "--url %s: plain http would carry your key and your secret in the clear; it is allowed on a loopback address only", raw)
		}
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp") + path
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

func gatewaySecretRun(ctx context.Context, o *GatewaySecretOptions) error {
	if o.URL == "" {
		return Usagef("e.g. --url https://gw.example.com", "gateway secret needs the gateway's --url")
	}
	target, err := memberSecretURL(o.URL, o.Name)
	if err != nil {
		return err
	}
	key, err := memberKey(o.KeyFile, o.Getenv)
	if err != nil {
		return err
	}
	method, body := http.MethodDelete, ""
	if !o.Remove {
		method = http.MethodPut
		if body, err = readSecretValue(ctx, o.IO, fmt.Sprintf("Your value of %s (not shown): ", o.Name)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, strings.NewReader(body))
	if err != nil {
		return FailureErr(err, "")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return FailureErr(fmt.Errorf("reaching the gateway: %w", err), "")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return FailureErr(memberSecretError(resp), "")
	}
	if o.Remove {
		fmt.Fprintf(o.IO.ErrOut, "Removed your value of %s from the gateway.\n", o.Name)
	} else {
		fmt.Fprintf(o.IO.ErrOut, "The gateway keeps your value of %s; your calls use it from the next one on.\n", o.Name)
	}
	return nil
}

// memberKey is the caller's key: --key-file, else $SWITCHBOARD_GATEWAY_KEY.
func memberKey(keyFile string, getenv func(string) (string, bool)) (string, error) {
	if keyFile != "" {
		b, err := safefile.ReadFile(keyFile)
		if err != nil {
			return "", Usagef("write your key to a file readable by you, e.g. with mode 0600", "reading --key-file: %v", err)
		}
		if k := strings.TrimSpace(string(b)); k != "" && !strings.ContainsAny(k, "\r\n") {
			return k, nil
		}
		return "", Usagef("put the key alone on the file's one line", "--key-file %s holds no key (or more than one line)", keyFile)
	}
	if k, ok := getenv(MemberKeyEnv); ok && strings.TrimSpace(k) != "" {
		return strings.TrimSpace(k), nil
	}
	return "", Usagef("export "+MemberKeyEnv+"=sbk_… (the key `gateway key add` gave you), or use --key-file", "no gateway key: $%s is not set", MemberKeyEnv)
}
