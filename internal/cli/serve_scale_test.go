package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewayScaleOutBehindNginx: two `serve --stateless` gateways behind
// nginx (round robin, on loopback) serve one client's calls alternately
// without errors (issue 6, point 6). Skipped unless nginx is installed
// (Debian: apt-get install nginx; .ci/run installs it).
func TestGatewayScaleOutBehindNginx(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, err := os.Stat(p); err == nil {
				nginx = p
			}
		}
	}
	if nginx == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed and CI=true (apt-get install nginx)")
		}
		t.Skip("nginx is not installed")
	}
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, []string{"mcp__alpha"}, nil)
	var upstreams []string
	for i := 0; i < 2; i++ {
		base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--stateless", "--token-file", tokenFileFor(t, w))
		defer stop()
		upstreams = append(upstreams, strings.TrimPrefix(base, "http://"))
	}

	// nginx on a free loopback port, in the foreground, all files in a
	// temp dir.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf(`worker_processes 1;
error_log %[1]s/error.log;
pid %[1]s/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  upstream gateways { server %[2]s; server %[3]s; }
  server {
    listen 127.0.0.1:%[4]d;
    location / {
      proxy_pass http://gateways;
      proxy_http_version 1.1;
      proxy_set_header Host 127.0.0.1;
      proxy_buffering off;
    }
  }
}
`, dir, upstreams[0], upstreams[1], port)
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nginx, "-p", dir, "-c", confFile, "-g", "daemon off;")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	}()
	lb := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(lb + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not come up: %v\n%s\n%s", err, out.String(), b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := &http.Client{Transport: bearerTransport{token: "scale-token"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scale"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect through nginx: %v", err)
	}
	defer cs.Close()
	pids := map[string]int{}
	for i := 0; i < 20; i++ {
		txt, isErr := callText(t, ctx, cs, "alpha__pid", nil)
		pid := pidRE.FindString(txt)
		if isErr || pid == "" {
			t.Fatalf("call %d through nginx: %q", i, txt)
		}
		pids[pid]++
	}
	// Each gateway runs its own alpha: two pids, both used.
	if len(pids) != 2 {
		t.Errorf("calls reached %d gateway(s), want 2: %v", len(pids), pids)
	}
}

func tokenFileFor(t *testing.T, w *gatewayWorld) string {
	t.Helper()
	p := filepath.Join(w.dir, "scale-token")
	if err := os.WriteFile(p, []byte("scale-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
