package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
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
