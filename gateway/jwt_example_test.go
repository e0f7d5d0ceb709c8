package gateway_test

import (
	"context"
	"fmt"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// An HTTP gateway as an OAuth resource server: access tokens of the
// issuer are callers besides the auth file's keys, and a request refused
// with 401 is told where the gateway's protected resource metadata is, so
// that an MCP client can find the issuer and log in. (The issuer is asked
// for its keys on the first token.)
func ExampleJWTVerifier() {
	v, err := gateway.NewJWTVerifier(&gateway.JWTOptions{
		Issuer:      "https://idp.example.com",
		Resource:    "https://gw.example.com/mcp",
		GroupsClaim: "roles",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	a := gateway.NewAuth(&gateway.AuthOptions{Verify: v.Verify, ResourceMetadataURL: v.MetadataURL()})
	_, err = a.Authenticate(context.Background(), "")
	fmt.Println(a.Challenge(err))

	// What a verified token's claims make of its bearer.
	p, _ := gateway.PrincipalFromClaims(map[string]any{"sub": "alice", "roles": []any{"eng", "ops"}}, "sub", "roles")
	fmt.Println(p.Name, p.Groups)
	// Output:
	// Bearer realm="switchboard", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"
	// alice [eng ops]
}
