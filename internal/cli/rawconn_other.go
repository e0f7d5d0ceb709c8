//go:build !linux

package cli

import "net"

// rawListen is Linux-only (see rawconn_linux.go): elsewhere net/http's
// connections are the listener's own.
func rawListen(ln net.Listener) net.Listener { return ln }
