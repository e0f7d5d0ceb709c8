//go:build unix

package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// registryVersion is the MCP Registry release the end-to-end test runs.
// v1.8.9 needs github.com/danielgtaylor/huma/v2 v2.40.0, which the Go
// module proxy does not serve; v1.8.8 has the same API and server.json
// types.
const registryVersion = "v1.8.8"

// TestRegistryReal is issue 21's "Done means" for the registry: the real
// registry server (github.com/modelcontextprotocol/registry, built from the
// Go module proxy) on PostgreSQL, both on loopback in a temp dir, seeded
// through the registry's own publish API (its anonymous auth, meant for
// tests) with real server.json files: an npm package
// (@modelcontextprotocol/server-everything, run offline from testdata/npm)
// and a remote (a test server over HTTPS that wants a bearer token). The
// scripts in testdata/registry then search it, add both with
// --from-registry and see the written entries start.
//
// Without postgres or a Go toolchain that can build the registry the test
// is skipped, except under CI=true, where it fails.
func TestRegistryReal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the MCP Registry and PostgreSQL")
	}
	bin := registryBinary(t)
	pg := startPostgres(t)
	regURL := startRegistry(t, bin, pg)
	p := npmtest.Install(t)

	const token = "registry-remote-token-1"
	remote, caFile := startTLSRemote(t, "Authorization: Bearer "+token)

	jwt := anonymousToken(t, regURL)
	// Every server.json of the seed: the everything server, the remote,
	// and issue 28's hostile entries (runner options, a file: spec).
	seeds, err := filepath.Glob(filepath.Join("testdata", "registry-seed", "*.server.json"))
	if err != nil || len(seeds) < 3 {
		t.Fatalf("registry seed: %v (%d files)", err, len(seeds))
	}
	for _, f := range seeds {
		publish(t, regURL, jwt, strings.ReplaceAll(readTestdata(t, strings.TrimPrefix(f, "testdata"+string(filepath.Separator))), "REMOTE_URL", remote))
	}

	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/registry",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			privateWorld(env)
			env.Setenv("SWITCHBOARD_REGISTRY_URL", regURL)
			env.Setenv("REGISTRY", regURL)
			env.Setenv("REMOTE_URL", remote)
			env.Setenv("REMOTE_TOKEN", token)
			env.Setenv("SSL_CERT_FILE", caFile) // the switchboard processes trust the remote's certificate
			env.Setenv("NODE_MODULES", filepath.Join(p.Dir, "node_modules"))
			env.Setenv("npm_config_offline", "true")
			env.Setenv("npm_config_update_notifier", "false")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
		},
	})
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// skipOrFail skips, or fails under CI=true: CI must run this test.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: the registry end-to-end test must run; .ci/run installs postgresql)", args...)
	}
	t.Skipf(format, args...)
}

// registryBinary builds the registry's main package once per version into
// the user cache directory (reruns take no time) and returns its path.
func registryBinary(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "switchboard-test", "mcp-registry-"+registryVersion)
	bin := filepath.Join(dir, "registry")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		skipOrFail(t, "no go tool to build the registry: %v", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if tmp, err = os.MkdirTemp(filepath.Dir(dir), "build-"); err != nil {
			t.Fatal(err)
		}
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, goTool, "install", "github.com/modelcontextprotocol/registry/cmd/registry@"+registryVersion)
	// Outside this module: its go.mod and go.work must not apply.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		skipOrFail(t, "building the registry %s: %v\n%s", registryVersion, err, out)
	}
	t.Logf("built the registry %s in %v", registryVersion, time.Since(start).Round(time.Second))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "registry"), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// pgBinary finds a PostgreSQL program: on $PATH, else in Debian's
// /usr/lib/postgresql/<major>/bin.
func pgBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob(filepath.Join("/usr/lib/postgresql", "*", "bin", name))
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found in $PATH or /usr/lib/postgresql/*/bin", name)
}

// startPostgres runs a throwaway PostgreSQL cluster on 127.0.0.1 and
// returns its URL. PostgreSQL refuses to run as root: as root the cluster
// runs as the "postgres" (else "nobody") user.
func startPostgres(t *testing.T) string {
	t.Helper()
	initdb, err := pgBinary("initdb")
	if err != nil {
		skipOrFail(t, "no PostgreSQL: %v", err)
	}
	pgctl, err := pgBinary("pg_ctl")
	if err != nil {
		skipOrFail(t, "no PostgreSQL: %v", err)
	}
	var cred *syscall.Credential
	// Not t.TempDir: its parents are private to this user.
	dir, err := os.MkdirTemp("", "switchboard-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			u, err = user.Lookup("nobody")
		}
		if err != nil {
			skipOrFail(t, "running as root and no postgres or nobody user to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if out, err := cmd.CombinedOutput(); err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "pg.log"))
			t.Fatalf("%s %s: %v\n%s\n%s", filepath.Base(name), strings.Join(args, " "), err, out, log)
		}
	}
	data := filepath.Join(dir, "data")
	run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	port := registryFreePort(t)
	run(pgctl, "-D", data, "-l", filepath.Join(dir, "pg.log"), "-w", "-t", "60", "start",
		"-o", fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c fsync=off", port, dir))
	t.Cleanup(func() {
		cmd := exec.Command(pgctl, "-D", data, "-m", "immediate", "-w", "stop")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		_ = cmd.Run()
	})
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
}

func registryFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRegistry runs the registry on 127.0.0.1 with only what a test needs:
// anonymous publishing (the io.modelcontextprotocol.anonymous namespace),
// no ownership checks against npm (which would need the network), no seed
// import, a fresh signing key.
func startRegistry(t *testing.T, bin, pgURL string) string {
	t.Helper()
	port := registryFreePort(t)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("MCP_REGISTRY_SERVER_ADDRESS=127.0.0.1:%d", port),
		"MCP_REGISTRY_DATABASE_URL="+pgURL,
		"MCP_REGISTRY_DATABASE_MIN_CONNECTIONS=1",
		"MCP_REGISTRY_DATABASE_MAX_CONNECTIONS=4",
		"MCP_REGISTRY_JWT_PRIVATE_KEY="+hex.EncodeToString(key),
		"MCP_REGISTRY_ENABLE_ANONYMOUS_AUTH=true",
		"MCP_REGISTRY_ENABLE_REGISTRY_VALIDATION=false",
		"MCP_REGISTRY_SEED_FROM=",
		"MCP_REGISTRY_GITHUB_CLIENT_ID=",
		"MCP_REGISTRY_GITHUB_CLIENT_SECRET=",
		"MCP_REGISTRY_OIDC_ENABLED=false",
	)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("registry log:\n%s", logs.String())
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/v0.1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case <-done:
			t.Fatalf("the registry exited:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry did not answer /v0.1/health within 60s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func anonymousToken(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/v0.1/auth/none", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		Token string `json:"registry_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.Token == "" {
		t.Fatalf("anonymous token: status %d, %v", resp.StatusCode, err)
	}
	return tok.Token
}

func publish(t *testing.T, base, jwt, serverJSON string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v0.1/publish", strings.NewReader(serverJSON))
	req.Header.Set("Authorization", "Bearer "+jwt)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("publish: %d %s", resp.StatusCode, body.String())
	}
}

// startTLSRemote serves the echo test server over HTTPS at
// https://127.0.0.2:PORT/mcp (the registry refuses remotes that are not
// https, or whose host is spelled localhost or 127.0.0.1), wanting the
// header required, and returns its URL and the CA file that trusts it.
func startTLSRemote(t *testing.T, required string) (string, string) {
	t.Helper()
	web := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: required})
	target, _ := url.Parse(web.URL)
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "switchboard registry test remote"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.2")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		skipOrFail(t, "cannot listen on 127.0.0.2: %v", err)
	}
	ts := httptest.NewUnstartedServer(proxy)
	ts.Listener.Close()
	ts.Listener = l
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", caFile
}
