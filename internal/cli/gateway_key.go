package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/gateway"
)

func init() {
	registerCommand(newGatewayCmd)
}

// GatewayKeyOptions are the inputs of `switchboard gateway key …`.
type GatewayKeyOptions struct {
	IO *IOStreams
	// AuthFile is --auth-file; "" means the Switchboard directory's
	// gateway-auth.json.
	AuthFile string
	Name     string
	Groups   []string
	JSON     bool
	Now      func() time.Time
}

func newGatewayCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Manage a team gateway's callers (API keys) and its session keys",
		Long: `A team gateway (switchboard serve --http) knows its callers by API key. Keys
live hashed in the gateway auth file (~/.switchboard/gateway-auth.json, mode
0600, JSON with comments), with each principal's groups; the same file holds
permission rules and rate limits scoped to a principal or a group:<name>.
A running gateway reloads it within a second, so a revoked key is refused
from then on without a restart.`,
	}
	key := &cobra.Command{Use: "key", Short: "Add, list and revoke API keys"}
	key.AddCommand(newGatewayKeyAddCmd(f, nil), newGatewayKeyListCmd(f, nil), newGatewayKeyRevokeCmd(f, nil))
	cmd.AddCommand(key, newGatewaySessionKeyCmd(f), newGatewaySecretCmd(f))
	cmd.AddCommand(newGatewayLoginCmds(f)...)
	return cmd
}

func (o *GatewayKeyOptions) file(f *Factory) string {
	if o.AuthFile != "" {
		return f.abs(o.AuthFile)
	}
	return filepath.Join(f.Home(), gateway.AuthFileName)
}

func gatewayKeyOpts(f *Factory, cmd *cobra.Command) *GatewayKeyOptions {
	o := &GatewayKeyOptions{IO: f.IO, Now: f.Now}
	cmd.Flags().StringVar(&o.AuthFile, "auth-file", "", "the gateway auth `FILE` (default ~/.switchboard/"+gateway.AuthFileName+")")
	return o
}

func newGatewayKeyAddCmd(f *Factory, runF func(context.Context, *GatewayKeyOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Issue an API key for a principal (shown once)",
		Long: `Issue a new API key for principal NAME, creating the principal if needed, and
print it once: the auth file keeps only its SHA-256. A principal may hold
several keys (one per machine, say); --group adds it to groups.`,
		Example: `  switchboard gateway key add alice --group eng
  curl -H "Authorization: Bearer $KEY" …`,
		Args: exactArgs(1, "a principal name such as alice"),
	}
	o := gatewayKeyOpts(f, cmd)
	cmd.Flags().StringArrayVar(&o.Groups, "group", nil, "add the principal to `GROUP` (repeatable)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.Name = args[0]
		o.JSON = f.global().JSON
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		return gatewayKeyAddRun(f, o)
	}
	return cmd
}

func gatewayKeyAddRun(f *Factory, o *GatewayKeyOptions) error {
	if strings.HasPrefix(o.Name, gateway.GroupPrefix) {
		return Usagef("name the principal; "+gateway.GroupPrefix+"<name> entries hold a group's rules", "%q is a group, which holds no keys", o.Name)
	}
	if err := gateway.ReservedName(o.Name); err != nil {
		return UsageErr(err, "give the key's holder a name of its own, such as alice; the shared token itself comes from serve --token-file or $"+TokenEnv)
	}
	if err := gateway.ValidName(o.Name); err != nil {
		return UsageErr(err, "")
	}
	path := o.file(f)
	key, err := gateway.AddKey(path, o.Name, o.Groups, o.Now())
	if err != nil {
		return FailureErr(fmt.Errorf("adding a key for %s: %w", o.Name, err), "")
	}
	if o.JSON {
		id, _, _ := strings.Cut(strings.TrimPrefix(key, gateway.KeyPrefix), "_")
		return printJSON(o.IO.Out, map[string]any{"principal": o.Name, "key": key, "id": id, "file": path})
	}
	// The key alone on stdout, so that KEY=$(switchboard gateway key add …)
	// works; the words on stderr.
	fmt.Fprintln(o.IO.Out, key)
	fmt.Fprintf(o.IO.ErrOut, "Added a key for %s to %s. It is shown only now: the file keeps its hash.\n", o.Name, f.tilde(path))
	return nil
}

func newGatewayKeyListCmd(f *Factory, runF func(context.Context, *GatewayKeyOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List principals, their groups and keys (never the keys themselves)",
		Long: `List the principals of the gateway auth file: their groups, the IDs of their
keys (never the keys themselves), when the newest was made and how many rules
the file scopes to them. A group's entry (group:NAME) is listed too.

Piped, the first line is the header (NAME GROUPS KEYS CREATED RULES,
tab-separated), then one tab-separated row per principal with those five
columns: groups and key IDs comma-separated, KEYS "-" for none ("- (revoked)"
for a principal whose keys were revoked), CREATED a date. Skip the header with
tail -n +2, or use --json.`,
		Args: cobra.NoArgs,
	}
	o := gatewayKeyOpts(f, cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.JSON = f.global().JSON
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		return gatewayKeyListRun(f, o)
	}
	return cmd
}

type gatewayPrincipalRow struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
	Keys   []struct {
		ID      string    `json:"id"`
		Created time.Time `json:"created"`
	} `json:"keys"`
	Rules     int  `json:"rules"`
	RateLimit bool `json:"rateLimit"`
}

func gatewayKeyListRun(f *Factory, o *GatewayKeyOptions) error {
	path := o.file(f)
	af, _, err := gateway.ReadAuthFile(path)
	if err != nil {
		return ConfigErr(err, "fix the file (JSON with // comments allowed)")
	}
	names := make([]string, 0, len(af.Principals))
	for n := range af.Principals {
		names = append(names, n)
	}
	sort.Strings(names)
	rows := []gatewayPrincipalRow{}
	for _, n := range names {
		e := af.Principals[n]
		r := gatewayPrincipalRow{Name: n, Groups: append([]string{}, e.Groups...), Rules: len(e.Allow) + len(e.Ask) + len(e.Deny), RateLimit: e.RateLimit != nil}
		for _, k := range e.Keys {
			r.Keys = append(r.Keys, struct {
				ID      string    `json:"id"`
				Created time.Time `json:"created"`
			}{k.ID, k.Created})
		}
		if r.Keys == nil {
			r.Keys = []struct {
				ID      string    `json:"id"`
				Created time.Time `json:"created"`
			}{}
		}
		rows = append(rows, r)
	}
	if o.JSON {
		return printJSON(o.IO.Out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(o.IO.ErrOut, "No principals in %s; add one with `switchboard gateway key add NAME`.\n", f.tilde(path))
		return nil
	}
	t := newTablePrinter(o.IO, "NAME", "GROUPS", "KEYS", "CREATED", "RULES")
	for _, r := range rows {
		ids, created := make([]string, 0, len(r.Keys)), ""
		for _, k := range r.Keys {
			ids = append(ids, k.ID)
			created = k.Created.UTC().Format("2006-01-02")
		}
		keys := strings.Join(ids, ",")
		if keys == "" {
			keys = "-"
			if !strings.HasPrefix(r.Name, gateway.GroupPrefix) {
				keys = "- (revoked)"
			}
		}
		t.AddRow(r.Name, strings.Join(r.Groups, ","), keys, created, strconv.Itoa(r.Rules))
	}
	return t.Render()
}

func newGatewayKeyRevokeCmd(f *Factory, runF func(context.Context, *GatewayKeyOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke every key of a principal",
		Long: `Remove every key of principal NAME from the auth file; its groups, rules and
limits stay. A running gateway refuses the keys (401) within a second.`,
		Args: exactArgs(1, "a principal name"),
	}
	o := gatewayKeyOpts(f, cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.Name = args[0]
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		path := o.file(f)
		n, err := gateway.RevokeKeys(path, o.Name)
		if err != nil {
			return FailureErr(fmt.Errorf("revoking the keys of %s: %w", o.Name, err), "see `switchboard gateway key list`")
		}
		fmt.Fprintf(o.IO.ErrOut, "Revoked %d key(s) of %s in %s.\n", n, o.Name, f.tilde(path))
		return nil
	}
	return cmd
}
