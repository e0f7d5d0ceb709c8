package npmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Registry is a local npm registry on loopback: verdaccio, pinned by
// testdata/npm-registry, holding the packages of
// testdata/npm-registry/packages (published at its start) and nothing
// else. It has no uplink: nothing it serves comes from the internet, and a
// package it does not hold is a 404. Point npm at it with
// npm_config_registry=URL (or registry=URL in an npmrc).
type Registry struct {
	// URL is its address, "http://127.0.0.1:PORT/".
	URL string
	// Packages names what it serves (switchboard-echo-server, a tiny MCP
	// server with no dependencies: `npx -y switchboard-echo-server`).
	Packages []string

	cmd    *exec.Cmd
	exited chan struct{}
	dir    string
	stop   sync.Once
}

// registryStartTimeout bounds verdaccio's start and the publishing.
const registryStartTimeout = 2 * time.Minute

// StartRegistry installs verdaccio when needed (as Install does), starts
// a registry for the test and stops it at the test's end. Without node or
// npm it skips the test, or fails it under CI=true.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	r, err := RunRegistry(t.Logf)
	if err != nil {
		var missing missingToolError
		if errors.As(err, &missing) && os.Getenv("CI") != "true" {
			t.Skipf("npmtest: %v; skipping the registry test", err)
		}
		t.Fatalf("npmtest: %v", err)
	}
	t.Cleanup(r.Stop)
	return r
}

// RunRegistry is StartRegistry for programs that are not tests (the bench
// program): the caller stops the registry.
func RunRegistry(logf func(string, ...any)) (*Registry, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "testdata", "npm-registry")
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, missingToolError{"node"}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, missingToolError{"npm"}
	}
	if err := ciOnce(dir, logf); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "switchboard-npm-registry-")
	if err != nil {
		return nil, err
	}
	r := &Registry{dir: work}
	ok := false
	defer func() {
		if !ok {
			r.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), registryStartTimeout)
	defer cancel()
	// A free port, taken by verdaccio a moment later: should another take
	// it meanwhile, verdaccio ends, and it is tried again on another.
	for attempt := 0; ; attempt++ {
		err := r.start(ctx, node, dir)
		if err == nil {
			break
		}
		if attempt == 2 || ctx.Err() != nil {
			return nil, err
		}
	}
	token, err := r.addUser(ctx)
	if err != nil {
		return nil, err
	}
	npmrc := filepath.Join(work, "publish.npmrc")
	host := strings.TrimPrefix(r.URL, "http:")
	if err := os.WriteFile(npmrc, []byte(host+":_authToken="+token+"\n"), 0o600); err != nil {
		return nil, err
	}
	pkgs, _ := filepath.Glob(filepath.Join(dir, "packages", "*", "package.json"))
	for _, pj := range pkgs {
		pkg := filepath.Dir(pj)
		cmd := exec.CommandContext(ctx, npm, "publish", pkg, "--registry", r.URL, "--no-git-checks")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "npm_config_userconfig="+npmrc, "npm_config_cache="+filepath.Join(work, "npm-cache"),
			"npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("npm publish %s: %v\n%s", filepath.Base(pkg), err, b)
		}
		r.Packages = append(r.Packages, filepath.Base(pkg))
	}
	logf("npmtest: a registry at %s with %s", r.URL, strings.Join(r.Packages, ", "))
	ok = true
	return r, nil
}

// start starts verdaccio on a free port and waits until it answers.
func (r *Registry) start(ctx context.Context, node, dir string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := filepath.Join(r.dir, "config.yaml")
	yaml := fmt.Sprintf(`storage: %s
auth:
  htpasswd:
    file: %s
    max_users: 10
uplinks: {}
packages:
  '**':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
log: { type: stdout, format: json, level: warn }
listen: 127.0.0.1:%d
`, filepath.Join(r.dir, "storage"), filepath.Join(r.dir, "htpasswd"), port)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		return err
	}
	r.cmd = exec.Command(node, filepath.Join(dir, "node_modules", "verdaccio", "bin", "verdaccio"), "--config", cfg)
	r.cmd.Dir = r.dir
	r.cmd.Env = append(os.Environ(), "NODE_ENV=production")
	var logs bytes.Buffer
	r.cmd.Stdout, r.cmd.Stderr = &logs, &logs
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("starting verdaccio: %w", err)
	}
	exited := make(chan struct{})
	go func() { r.cmd.Wait(); close(exited) }()
	r.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.URL+"-/ping", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				r.exited = exited
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("verdaccio ended: %s", logs.String())
		case <-ctx.Done():
			r.cmd.Process.Kill()
			<-exited
			return fmt.Errorf("verdaccio did not answer within %v: %s", registryStartTimeout, logs.String())
		case <-tick.C:
		}
	}
}

// addUser creates the publishing user and returns its token, as
// `npm adduser` does.
func (r *Registry) addUser(ctx context.Context) (string, error) {
	body, _ := json.Marshal(map[string]string{"name": "switchboard-test", "password": "switchboard-test-password"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, r.URL+"-/user/org.couchdb.user:switchboard-test", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("adding the publishing user: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var res struct {
		Token string `json:"token"`
	}
	if resp.StatusCode/100 != 2 || json.Unmarshal(b, &res) != nil || res.Token == "" {
		return "", fmt.Errorf("adding the publishing user: %s: %s", resp.Status, b)
	}
	return res.Token, nil
}

// Stop ends the registry and removes its files. Idempotent.
func (r *Registry) Stop() {
	r.stop.Do(func() {
		if r.exited != nil {
			r.cmd.Process.Kill() // verdaccio is one node process
			<-r.exited
		}
		os.RemoveAll(r.dir)
	})
}
