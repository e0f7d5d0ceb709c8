// Command probe tries, one by one, what a sandbox must refuse, and prints
// one line per attempt: "NAME ok" or "NAME error: …". Every attempt is
// bounded, so a hang shows as "NAME error: timeout" rather than a stuck test.
//
//	probe KEYFILE HOMEDIR OUTSIDEFILE HOST:PORT
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: probe KEYFILE HOMEDIR OUTSIDEFILE HOST:PORT")
		os.Exit(2)
	}
	key, home, outside, addr := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	try("read-key", func() error {
		b, err := os.ReadFile(key)
		if err == nil && len(b) == 0 {
			return fmt.Errorf("empty")
		}
		return err
	})
	try("list-home", func() error {
		ents, err := os.ReadDir(home)
		if err == nil && len(ents) == 0 {
			return fmt.Errorf("empty")
		}
		return err
	})
	try("write-outside", func() error { return os.WriteFile(outside, []byte("escaped\n"), 0o644) })
	try("connect-loopback", func() error {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}

func try(name string, f func() error) {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Printf("%s error: %v\n", name, err)
		} else {
			fmt.Printf("%s ok\n", name)
		}
	case <-time.After(5 * time.Second):
		fmt.Printf("%s error: timeout\n", name)
	}
}
