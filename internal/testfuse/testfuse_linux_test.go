package testfuse

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The mount serves what was added; a stall of opens holds an exec but not
// a stat; Resume lets it through; a stall of everything holds statfs too.
func TestStallHoldsTheKernel(t *testing.T) {
	f := Mount(t)
	f.AddFile("hello", []byte("#!/bin/sh\necho hi\n"), 0o755)
	f.AddDir("sub")
	bin := filepath.Join(f.Dir, "hello")
	if out, err := exec.Command(bin).Output(); err != nil || string(out) != "hi\n" {
		t.Fatalf("running a script from the mount: %q, %v", out, err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(bin, &st); err != nil || st.Type != 0x65735546 {
		t.Fatalf("statfs: type %#x, %v; want FUSE's magic", st.Type, err)
	}

	f.Stall(Opens)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("stat with opens stalled: %v", err)
	}
	cmd := exec.Command(bin)
	out := make(chan error, 1)
	go func() { _, err := cmd.Output(); out <- err }()
	if !f.WaitForHeld(5 * time.Second) {
		t.Fatal("the exec's open never reached the daemon")
	}
	select {
	case err := <-out:
		t.Fatalf("the exec ended while its open was held: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	f.Resume()
	select {
	case err := <-out:
		if err != nil {
			t.Fatalf("the exec after Resume: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the exec still hangs after Resume")
	}

	f.Stall(Everything)
	done := make(chan error, 1)
	go func() { done <- syscall.Statfs(filepath.Join(f.Dir, "sub"), new(syscall.Statfs_t)) }()
	if !f.WaitForHeld(5 * time.Second) {
		t.Fatal("statfs never reached the daemon")
	}
	f.Resume()
	if err := <-done; err != nil {
		t.Fatalf("statfs after Resume: %v", err)
	}
}

// A deaf stall holds its caller through a SIGKILL, until Resume; a plain
// one lets a killed caller go.
func TestDeafStallOutlastsSIGKILL(t *testing.T) {
	f := Mount(t)
	f.AddFile("data", []byte("x"), 0o644)
	path := filepath.Join(f.Dir, "data")
	for _, deaf := range []bool{false, true} {
		f.Stall(Opens)
		if deaf {
			f.Deafen()
		}
		cmd := exec.Command("cat", path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !f.WaitForHeld(5 * time.Second) {
			t.Fatal("the open never reached the daemon")
		}
		cmd.Process.Kill()
		select {
		case <-done:
			if deaf {
				t.Fatal("a SIGKILL freed the caller of a deaf stall")
			}
			f.Resume()
			continue
		case <-time.After(time.Second):
			if !deaf {
				t.Fatal("a SIGKILL did not free the caller of a plain stall")
			}
		}
		f.Resume()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the caller is still held after Resume")
		}
	}
}
