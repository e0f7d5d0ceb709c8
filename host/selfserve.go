package host

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchboard-mcp/switchboard/config"
)

// GatewayEnv is the variable a Switchboard gateway (`switchboard serve`)
// sets, to its process id, in the environment of every stdio server it
// starts (Options.ChildEnv). A `switchboard serve` that finds it set was
// started as an upstream server of a gateway, directly or through a
// wrapper, and refuses to run: a gateway never serves itself,
// or a gateway entry in a file Switchboard also reads (a project's
// .mcp.json) would start gateways without end.
const GatewayEnv = "SWITCHBOARD_GATEWAY"

// selfUpstreamReason is the reason a server that is a Switchboard gateway is
// not started.
const selfUpstreamReason = "this is a Switchboard gateway (switchboard serve); a gateway never serves itself"

// GatewayHeader is the header a gateway's host (Options.GatewayID) sends
// with every request to a remote server, carrying that ID. A gateway that
// receives its own ID in it is being asked to serve itself — its own URL
// is among the servers it reads, as `mcp import` of a client's entry for it
// puts it there — and refuses with 508 Loop Detected, the header echoed;
// the host then takes the server for the gateway itself and stops trying
// (state disabled, SelfEndpointReason). Without it, each sync served the
// gateway's tools again under one more prefix, without end.
const GatewayHeader = "Switchboard-Gateway"

// SelfEndpointReason is why a remote server that is the gateway over this
// host itself is in state disabled: its URL is the gateway's own endpoint.
const SelfEndpointReason = "this URL is this Switchboard gateway's own endpoint; a gateway never serves itself (other Switchboard processes, and the clients it serves, may use it)"

// errSelfUpstream is the connect error of a remote server that answered a
// gateway's host as that very gateway (GatewayHeader).
var errSelfUpstream = errors.New("this URL is this Switchboard gateway's own endpoint; a gateway never serves itself: remove the entry from the servers it reads")

// GatewayID is Options.GatewayID: the ID a gateway over this host refuses
// to serve itself by (GatewayHeader); "" when the host serves no gateway.
func (h *Host) GatewayID() string { return h.opts.GatewayID }

// selfLoopTransport recognizes the gateway's answer to its own ID, which
// headerTransport sends (GatewayHeader) with the server's configured
// headers.
type selfLoopTransport struct {
	base http.RoundTripper
	id   string
	seen *atomic.Bool // set when the server turned out to be the gateway itself
}

func (t selfLoopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusLoopDetected && resp.Header.Get(GatewayHeader) == t.id {
		resp.Body.Close()
		t.seen.Store(true)
		return nil, errSelfUpstream
	}
	return resp, err
}

// GatewayEntryReason is why a gateway's own entry (IsGatewayServer) is in
// state disabled.
const GatewayEntryReason = "the Switchboard gateway's own entry (switchboard serve), for the clients that read this file; Switchboard never starts it: a gateway never serves itself"

// IsGatewayServer reports whether rs is the entry of a Switchboard gateway:
// a stdio server whose command is switchboard … serve (IsGatewayCommand),
// as `switchboard mcp install-gateway` writes it into a client's file —
// which may be a file Switchboard reads too (a project's .mcp.json). A host
// never starts such a server and asks no approval for it: it is in state
// disabled, with GatewayEntryReason. Refusing it costs nothing: a
// repository can only keep its own entry from starting.
func IsGatewayServer(rs *config.ResolvedServer) bool {
	return config.InferType(rs.Effective) == config.TypeStdio && IsGatewayCommand(rs.Effective.Command, rs.Effective.Args)
}

// IsGatewayCommand reports whether command with args runs a Switchboard
// gateway: a program named switchboard (or this very executable) given the
// serve command. It is how a host knows, before starting it, that a server
// entry is the gateway's own (as install-gateway writes it).
func IsGatewayCommand(command string, args []string) bool {
	if !isSwitchboard(command) {
		return false
	}
	for _, a := range args {
		if a == "serve" {
			return true
		}
		if a == "--" {
			break
		}
	}
	return false
}

func isSwitchboard(command string) bool {
	base := strings.ToLower(filepath.Base(command))
	if runtime.GOOS == "windows" {
		base = strings.TrimSuffix(base, ".exe")
	}
	if base == "switchboard" {
		return true
	}
	self := selfExe()
	if self == "" || !filepath.IsAbs(command) {
		return false
	}
	if real, err := filepath.EvalSymlinks(command); err == nil {
		command = real
	}
	return command == self
}

var selfExe = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		return real
	}
	return exe
})
