package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// httpGateway is one way to start an HTTP gateway in a world, given
// serve's flags (those both understand: --http, --token-file,
// --allow-origin, --stateless, --max-sessions, --body-timeout,
// --oauth-issuer, --resource-url, --session-key-file, --advertise).
type httpGateway struct {
	name  string
	start func(t testing.TB, w *gatewayWorld, args ...string) (base string, stop func())
}

// httpGateways are the gateways the HTTP suite's protection tests run
// against: `switchboard serve --http`, and examples/gateway, which serves
// the same handler (gateway.Handler) in a few dozen lines of an
// embedder's code — so whatever protects serve protects an embedder too.
var httpGateways = []httpGateway{
	{"serve", startHTTPGateway},
	{"examples-gateway", startExampleGateway},
}

// forEachHTTPGateway runs test against each of httpGateways, as subtests.
func forEachHTTPGateway(t *testing.T, test func(t *testing.T, start func(t testing.TB, w *gatewayWorld, args ...string) (string, func()))) {
	for _, gw := range httpGateways {
		t.Run(gw.name, func(t *testing.T) { test(t, gw.start) })
	}
}

// exampleGateway is examples/gateway, built once per run of the tests
// into buildDir (removed by TestMain).
var exampleGateway struct {
	once     sync.Once
	buildDir string
	bin      string
	err      error
}

// exampleGatewayBin builds examples/gateway once and returns its path. A
// missing go command skips the test, except under CI=true.
func exampleGatewayBin(t testing.TB) string {
	t.Helper()
	e := &exampleGateway
	e.once.Do(func() {
		if e.buildDir, e.err = os.MkdirTemp("", "switchboard-example-gateway"); e.err != nil {
			return
		}
		e.bin = filepath.Join(e.buildDir, "gateway")
		if runtime.GOOS == "windows" {
			e.bin += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", e.bin, "./examples/gateway")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			e.err = errors.Join(err, errors.New(string(out)))
		}
	})
	if e.err != nil {
		if errors.Is(e.err, exec.ErrNotFound) && os.Getenv("CI") != "true" {
			t.Skipf("building examples/gateway: %v", e.err)
		}
		t.Fatalf("building examples/gateway: %v", e.err)
	}
	return e.bin
}

// removeExampleGateway removes what exampleGatewayBin built.
func removeExampleGateway() {
	if d := exampleGateway.buildDir; d != "" {
		os.RemoveAll(d)
	}
}

// startExampleGateway starts examples/gateway in w with serve's flags
// args, and what serve finds by itself: the workspace, the auth file in
// the Switchboard folder, the tests' --wait.
func startExampleGateway(t testing.TB, w *gatewayWorld, args ...string) (base string, stop func()) {
	t.Helper()
	args = append([]string{"--workspace", w.ws, "--auth-file", filepath.Join(w.sbHome, gateway.AuthFileName), "--wait", testServeWait}, args...)
	cmd := exec.Command(exampleGatewayBin(t), args...)
	cmd.Env = w.env
	cmd.Dir = w.ws
	return startGatewayProcess(t, cmd)
}
