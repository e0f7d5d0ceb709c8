package host

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

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
