package redact_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

func Example() {
	fmt.Println(redact.Args(map[string]any{"path": "/tmp/a", "password": "hunter22"}))
	fmt.Println(redact.Env(map[string]string{"API_TOKEN": "abc123", "MODE": "fast"}))
	fmt.Println(redact.String(`GET https://api.test/?access_token=abc123: 401`))
	fmt.Println(redact.String("server stderr: using key sk-live-0042", "sk-live-0042"))

	log := slog.New(redact.Handler(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	log.Info("calling tool", "tool", "login", "token", "abc123")
	// Output:
	// map[password:<redacted> path:/tmp/a]
	// map[API_TOKEN:<redacted> MODE:fast]
	// GET https://api.test/?access_token=<redacted>: 401
	// server stderr: using key <redacted>
	// level=INFO msg="calling tool" tool=login token=<redacted>
}
