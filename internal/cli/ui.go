package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/console"
	"github.com/switchboard-mcp/switchboard/policy"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewUICmd(f, nil) })
}

// UIOptions are the inputs of `switchboard ui`.
type UIOptions struct {
	IO      *IOStreams
	Factory *Factory
	// Port is --port (0: a random free port); the console listens on
	// loopback only.
	Port      int
	NoBrowser bool
	// OpenBrowser opens the console's address; nil: the platform's opener.
	OpenBrowser func(url string) error
}

// NewUICmd returns `switchboard ui`; runF, if not nil, replaces uiRun.
func NewUICmd(f *Factory, runF func(context.Context, *UIOptions) error) *cobra.Command {
	opts := &UIOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the console in the browser: servers, approvals, permissions, playground",
		Long: `Start this workspace's servers and serve a console for them on loopback
(127.0.0.1, a random port unless --port), then open it in the browser.

The address printed holds a one-time token: the first visit exchanges it for a
session cookie, and Enter in the terminal prints a new address for another browser. Nothing else can reach the console: it answers only to its own
Host, refuses changes from other sites, and writes every change to
~/.switchboard/logs/console-audit.jsonl.

In the console: approve the repository's servers (the same review as
` + "`mcp approve`" + `), pause, resume and retry servers, add and remove permission
rules, call tools in the playground, and answer the permission questions of
those calls. It runs until interrupted (Ctrl-C).`,
		Example: `  switchboard ui
  switchboard ui --no-browser --port 7777`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return uiRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Port, "port", 0, "loopback port to listen on (0: a random free port)")
	cmd.Flags().BoolVar(&opts.NoBrowser, "no-browser", false, "print the address, do not open a browser")
	return cmd
}

func uiRun(ctx context.Context, opts *UIOptions) error {
	f := opts.Factory
	cfg, err := f.LoadConfig()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	logs := filepath.Join(f.Home(), "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return fmt.Errorf("ui: the audit log: %w", err)
	}
	audit, err := os.OpenFile(filepath.Join(logs, "console-audit.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("ui: the audit log: %w", err)
	}
	defer audit.Close()

	asks := console.NewAsks()
	front := f.switchboardOptions()
	front.Workspace = cfg.Workspace
	first := true
	front.Load = func() (*config.Resolved, error) {
		if first {
			first = false
			return cfg, nil
		}
		return f.LoadConfig()
	}
	// Project servers are not asked about before they start (nobody can
	// answer yet): they stay held, needing approval, until approved on the
	// Servers page. Permission questions go to the console's pages.
	front.Prompter = nil
	front.Permit = func(p *policy.Policy) host.Permit {
		return host.PolicyPermit(p, &host.PermitOptions{Asker: asks, UserSettings: f.tilde(policy.UserSettingsPath(f.Home()))})
	}
	// As every command that runs servers logs: to Home/logs, and on stderr
	// only at --log-level debug or info. The console shows each server's
	// state and error itself; the terminal keeps the address and Ctrl-C.
	log, closeLog := (&runtimeOptions{IO: opts.IO, Home: f.Home(), LogLevel: f.global().LogLevel}).logger()
	defer closeLog()
	front.Logger = log
	sb, err := switchboard.Open(ctx, front)
	if err != nil {
		return err
	}
	defer sb.Close()
	go func() { _ = sb.Watch(ctx) }()

	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return err
	}
	hostport := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// The console lives under a path of its own, secret as the token is:
	// its session cookie (Path=base) then goes only to it. A browser sends
	// a cookie to every port of 127.0.0.1, so a page served by any other
	// local program on another port would otherwise get it, and with it
	// the console.
	secretPath := make([]byte, 12)
	if _, err := rand.Read(secretPath); err != nil {
		return err
	}
	base := "/" + hex.EncodeToString(secretPath)
	c, err := console.New(sb, console.Options{
		BasePath: base,
		Token:    hex.EncodeToString(token),
		Hosts:    []string{hostport, "localhost:" + strconv.Itoa(port)},
		Asks:     asks,
		Audit:    audit,
		Home:     f.Home(),
		Environ:  os.Environ,
		Now:      f.Now,
	})
	if err != nil {
		return err
	}
	asks.AllowRule = c.WriteAllow
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()

	u := "http://" + hostport + base + "/?token=" + hex.EncodeToString(token)
	fmt.Fprintf(opts.IO.Out, "Switchboard console: %s\n", u)
	fmt.Fprintln(opts.IO.ErrOut, "The address opens the console once (Enter prints a new one, for another browser). Ctrl-C stops the console and its servers.")
	go newLinks(opts.IO, hostport+base, c)
	if !opts.NoBrowser {
		open := opts.OpenBrowser
		if open == nil {
			open = openBrowser
		}
		if err := open(u); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "No browser opened (%v): open the address above.\n", err)
		}
	}
	select {
	case <-ctx.Done():
		_ = srv.Close()
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// newLinks prints a new one-time address of the console (at hostport and
// its path) for each line read from the terminal, until its input ends.
func newLinks(ios *IOStreams, hostport string, c *console.Console) {
	if ios.In == nil {
		return
	}
	sc := bufio.NewScanner(ios.In)
	for sc.Scan() {
		fmt.Fprintf(ios.Out, "Switchboard console: http://%s/?token=%s\n", hostport, c.NewToken())
	}
}
