package oskeyring_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboard-mcp/switchboard"
	_ "github.com/switchboard-mcp/switchboard/oskeyring" // the OS credential store for ${secret:NAME} and OAuth tokens
)

// An agent that reads the secrets the switchboard command keeps in the
// desktop's keyring: with the import above, the servers' ${secret:NAME}
// references and stored OAuth logins are read from the OS credential
// store, as the command reads them. Without it, a value kept there is an
// error naming this package. (It needs the person's keyring, so it is
// not run as a test; TestSecretService runs the store against a real
// Secret Service.)
func Example() {
	home, _ := os.UserHomeDir()
	ctx := context.Background()
	sb, err := switchboard.Open(ctx, switchboard.Options{Home: filepath.Join(home, ".switchboard")})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
}
