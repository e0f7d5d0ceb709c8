package oauth

import (
	"errors"
	"fmt"
	"log/slog"
)

// A login handed to another machine: a team gateway's member logs in to
// an upstream server on their own machine (their browser, their loopback
// redirect) and hands the result to the gateway, which calls the upstream
// with it and refreshes it there (docs/gateway.md, Each member's own
// credentials).

// ExportLogin returns the login stored for server in the token files of
// dir (a Client with Options.Dir set to dir and no Options.Secrets): the
// tokens, the client registration and the token endpoint, which is all
// that another machine's Client needs to use and refresh them (see
// ImportLogin). It is (nil, nil) when none is stored. A login whose tokens
// are bound to a DPoP key is refused: that key never leaves the machine
// that made it, and the tokens are useless without it.
func ExportLogin(dir, server string) ([]byte, error) {
	st, err := loadStoredAuth(dir, server)
	if err != nil || st == nil {
		return nil, err
	}
	if err := handoffProblem(st); err != nil {
		return nil, err
	}
	return marshalStoredAuth(st)
}

// ImportLogin stores a login that ExportLogin returned, as server's, where
// a Client with Options{Dir: dir, Secrets: keys} finds it: that Client then
// sends its token to server and refreshes it (writing the new one back)
// without a login of its own. The login must be one for resource — the
// URL the Client is given for server — and not bound to a DPoP key; else,
// or when data is not a login, nothing is stored and the error says why
// (never quoting data, which holds secrets).
func ImportLogin(dir string, keys SecretStore, server, resource string, data []byte) error {
	if dir == "" {
		return errors.New("no token directory")
	}
	st, err := parseStoredAuth(data)
	if err != nil {
		return &BadLoginError{err.Error()}
	}
	if st.Resource != resource {
		return &BadLoginError{fmt.Sprintf("the login is for another server than %s (a token is never sent to another server)", resource)}
	}
	if st.TokenURL == "" && st.Token.RefreshToken != "" {
		return &BadLoginError{"the login names no token endpoint, so its token could not be refreshed"}
	}
	if err := handoffProblem(st); err != nil {
		return &BadLoginError{err.Error()}
	}
	ts := tokenStore{dir: dir, keys: keys, log: slog.New(slog.DiscardHandler)}
	return saveLogin(ts, server, st, nil)
}

// BadLoginError is ImportLogin's refusal of what it was given (as opposed
// to a store that failed).
type BadLoginError struct {
	// Why says what is wrong with the login, quoting none of it.
	Why string
}

func (e *BadLoginError) Error() string { return e.Why }

// HasLogin reports whether a login of server is stored where a Client
// with Options{Dir: dir, Secrets: keys} looks for it.
func HasLogin(dir string, keys SecretStore, server string) (bool, error) {
	st, err := tokenStore{dir: dir, keys: keys, log: slog.New(slog.DiscardHandler)}.load(server)
	return st != nil, err
}

// handoffProblem refuses a login that cannot be used elsewhere.
func handoffProblem(st *storedAuth) error {
	if st.DPoPJKT != "" || (st.Token != nil && tokenIsDPoP(st.Token)) {
		return errors.New("its tokens are bound to a key (DPoP) that stays on the machine that logged in, so no other machine can use them")
	}
	return nil
}
