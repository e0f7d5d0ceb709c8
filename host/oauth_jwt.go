package host

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

func newJWTClientHandler(a *serverAuth, clientID string, keyPEM []byte, alg string) (auth.OAuthHandler, error) {
	return nil, errors.New("private_key_jwt: not yet")
}
