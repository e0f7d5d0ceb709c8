package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The direct row of the gateway scenario: this program in its HTTP echo
// mode answers an echo call through gwLaunch's client, and stop ends it.
func TestGatewayDirectTarget(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is installed or built for a target not picked: peersDir is
	// a folder that must stay empty.
	peers := t.TempDir()
	b := &bench{self: self, tmp: t.TempDir(), peersDir: peers, gwPick: []string{"direct"}}
	targets, _ := b.gwTargets()
	if len(targets) != 1 || targets[0].key != "direct" {
		t.Fatalf("targets %v, want only direct", b.gwNames)
	}
	run, cold, err := b.gwLaunch(targets[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer run.stop()
	if ents, _ := os.ReadDir(peers); len(ents) > 0 {
		t.Errorf("a target not picked was installed or built in %s", peers)
	}
	if run.tool != "echo" || cold <= 0 || run.protocol == "" {
		t.Errorf("tool %q, cold %v, protocol %q; want echo, > 0, negotiated", run.tool, cold, run.protocol)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := run.connect(ctx, "srv")
	if err != nil {
		t.Fatal(err)
	}
	if err := run.call(ctx, cs); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	run.stop()
	select {
	case <-run.exited:
	default:
		t.Error("the target still runs after stop")
	}
}

// shellQuote's line runs the words it was given, quotes and all.
func TestShellQuote(t *testing.T) {
	words := []string{"printf", "%s|", "it's", "a b", "$HOME"}
	out, err := exec.Command("/bin/sh", "-c", shellQuote(words)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "it's|a b|$HOME|"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The floors of the gateway scenario: this program as the smallest Go SDK
// gateway, in each variant (the relay design's included), aggregates two
// real echo servers behind one Streamable HTTP endpoint under
// <server>__<tool> names and forwards a call under the server's own tool
// name, result and all.
func TestGatewaySDKProxyTargets(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"sdk-proxy", "sdk-proxy-jsonl", "sdk-proxy-relay"} {
		t.Run(key, func(t *testing.T) {
			b := &bench{self: self, tmp: t.TempDir(), peersDir: t.TempDir(), gwPick: []string{key}}
			targets, _ := b.gwTargets()
			if len(targets) != 1 || targets[0].key != key || !targets[0].floor || !targets[0].aggregates {
				t.Fatalf("targets %v, want only %s, a floor that aggregates", b.gwNames, key)
			}
			run, _, err := b.gwLaunch(targets[0], 2)
			if err != nil {
				t.Fatal(err)
			}
			defer run.stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := run.connect(ctx, "srv000")
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"srv000__echo", "srv001__echo"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools %v, want %s among them", names, want)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "srv001__echo", Arguments: map[string]any{"text": "through the floor"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 1 {
				t.Fatalf("result %+v, want one content and no error", res)
			}
			if text, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(text.Text, "through the floor") {
				t.Errorf("content %#v, want the echoed text", res.Content[0])
			}
		})
	}
}

// The "audit on" row is switchboard serve with its audit log really on:
// one call through it leaves one JSON line naming the server, the tool and
// the allow decision, and it is never taken for the best peer.
func TestGatewaySwitchboardAuditTarget(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{self: self, root: root, tmp: t.TempDir(), peersDir: t.TempDir(), gwPick: []string{"switchboard-audit"}}
	if _, err := b.switchboard(); err != nil {
		t.Fatal(err)
	}
	targets, _ := b.gwTargets()
	if len(targets) != 1 || targets[0].name != "switchboard, audit on" || !targets[0].ours || targets[0].floor {
		t.Fatalf("targets %v, want only switchboard-audit, ours and not a floor", b.gwNames)
	}
	run, _, err := b.gwLaunch(targets[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer run.stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := run.connect(ctx, "srv")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	file := filepath.Join(b.tmp, "home-gw-switchboard-audit", "audit.jsonl")
	before := auditLines(t, file)
	if err := run.call(ctx, cs); err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if lines = auditLines(t, file); len(lines) > len(before) {
			break
		}
	}
	if len(lines) != len(before)+1 {
		t.Fatalf("%d audit lines after the call, %d before; want one more", len(lines), len(before))
	}
	last := lines[len(lines)-1]
	if last["server"] != "srv" || last["server_tool"] != "echo" || last["decision"] != "allow" {
		t.Errorf("audit line %v, want server srv, server_tool echo and decision allow", last)
	}
}

// auditLines reads the audit log's JSON lines (none while it is missing).
func auditLines(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
