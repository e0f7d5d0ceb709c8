package cli

import (
	"errors"
	"io/fs"
	"net"
	"net/url"
	"strings"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// sessionKeyErr is a session key file's error (gateway.ReadSessionKeys)
// as serve and `gateway session-key` say it: with the flag and the fix.
func sessionKeyErr(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Usagef("create it with: switchboard gateway session-key add "+path, "reading --session-key-file: %v", err)
	case errors.Is(err, gateway.ErrSessionKeyFileMode):
		return Usagef("chmod 600 "+path, "--session-key-file %v", err)
	case errors.Is(err, gateway.ErrNoSessionKey):
		return Usagef("add one with: switchboard gateway session-key add "+path, "--session-key-file %v", err)
	case errors.Is(err, gateway.ErrBadSessionKey):
		return Usagef("each line holds one key, 32 random bytes in base64 (switchboard gateway session-key add FILE writes one), or a # comment", "%v", err)
	}
	return Usagef("", "reading --session-key-file: %v", err)
}

// newKeyRing reads --session-key-file (gateway.NewSessionKeyRing).
func newKeyRing(path string) (*gateway.SessionKeyRing, error) {
	k, err := gateway.NewSessionKeyRing(path, nil)
	if err != nil {
		return nil, sessionKeyErr(path, err)
	}
	return k, nil
}

// advertiseURL checks --advertise. Without it, the gateway's address is
// its own URL ("" here; serveRun knows the port once it listens), which
// requires that it listens on one host.
func advertiseURL(flag, listen string) (string, error) {
	if flag != "" {
		u, err := url.Parse(flag)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", Usagef("e.g. --advertise http://10.0.0.5:8080 (in Kubernetes: http://$(POD_IP):8080)",
				"--advertise %q is not an http(s) URL", flag)
		}
		return strings.TrimRight(u.Scheme+"://"+u.Host, "/"), nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		host = listen // serve's own Listen reports a bad address
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		return "", Usagef("pass the address the other instances reach this one at, e.g. --advertise http://10.0.0.5:8080 (in Kubernetes: http://$(POD_IP):8080)",
			"--session-key-file needs --advertise when the gateway listens on every address (%s)", listen)
	}
	return "", nil
}
