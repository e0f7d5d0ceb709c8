// Command probe tries, one by one, what a sandbox must refuse, and prints
// one line per attempt: "NAME ok" or "NAME error: …". Every attempt is
// bounded, so a hang shows as "NAME error: timeout" rather than a stuck test.
//
//	probe KEYFILE HOMEDIR OUTSIDEFILE HOST:PORT
//	probe net HOST:PORT…
//	probe ipc KEY
//	probe keyring DESCRIPTION
//
// With net, it reaches each HOST:PORT, whose listener sends a line
// naming it, three ways: "direct" (a plain connect), "connect" (an HTTP
// CONNECT through $HTTPS_PROXY, as a proxy-aware client does) and "get"
// (net/http with the proxy of $HTTP_PROXY, which sends an absolute-form
// request; the listener answers HTTP too). Each line is "WAY HOST:PORT
// ok LINE" or "WAY HOST:PORT error: …".
//
// With ipc, it attaches the System V shared memory segment of KEY (hex)
// and prints "shm ok TEXT" (what it holds, to the first NUL) or "shm
// error: …".
//
// With keyring, it reads the "user" key of DESCRIPTION from its session
// keyring, then joins a new session keyring, links into it every keyring
// /proc/keys shows and looks again; it prints "key ok TEXT" or "key
// error: …".
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "net" {
		for _, addr := range os.Args[2:] {
			tryNet(addr)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "ipc" {
		try("shm", func() error {
			key, err := strconv.ParseUint(os.Args[2], 16, 32)
			if err != nil {
				return err
			}
			id, err := unix.SysvShmGet(int(key), 0, 0)
			if err != nil {
				return err
			}
			b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
			if err != nil {
				return err
			}
			if i := strings.IndexByte(string(b), 0); i >= 0 {
				b = b[:i]
			}
			fmt.Printf("shm ok %s\n", b)
			return errReported
		})
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "keyring" {
		try("key", func() error { return readKey(os.Args[2]) })
		return
	}
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
		if err == errReported {
			return
		}
		if err != nil {
			fmt.Printf("%s error: %v\n", name, err)
		} else {
			fmt.Printf("%s ok\n", name)
		}
	case <-time.After(5 * time.Second):
		fmt.Printf("%s error: timeout\n", name)
	}
}

func tryNet(addr string) {
	report := func(way string, f func() (string, error)) {
		try(way+" "+addr, func() error {
			line, err := f()
			if err == nil {
				fmt.Printf("%s %s ok %s\n", way, addr, line)
				return errReported
			}
			return err
		})
	}
	report("direct", func() (string, error) {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		fmt.Fprintf(c, "HELLO\n")
		return readLine(c)
	})
	report("connect", func() (string, error) {
		proxy, err := proxyAddr("HTTPS_PROXY")
		if err != nil {
			return "", err
		}
		c, err := net.DialTimeout("tcp", proxy, 3*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(4 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nHELLO\n", addr, addr)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			return "", err
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return "", fmt.Errorf("proxy: %s: %s", resp.Status, strings.TrimSpace(string(b)))
		}
		return readLine(br)
	})
	report("get", func() (string, error) {
		proxy, err := proxyAddr("HTTP_PROXY")
		if err != nil {
			return "", err
		}
		// An explicit proxy: net/http's own reading of the environment
		// never proxies a loopback destination.
		tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})}
		c := &http.Client{Transport: tr, Timeout: 4 * time.Second}
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
		}
		return strings.TrimSpace(string(b)), nil
	})
}

// errReported marks an attempt that printed its own "ok" line.
var errReported = fmt.Errorf("reported")

func readLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading: %w", err)
	}
	return strings.TrimSpace(line), nil
}

func proxyAddr(key string) (string, error) {
	v := os.Getenv(key)
	if v == "" {
		return "", fmt.Errorf("no %s", key)
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%s=%q is not a proxy URL", key, v)
	}
	return u.Host, nil
}

// readKey prints the "user" key desc as its session keyring holds it, or
// after a new session keyring got the keyrings of /proc/keys linked in.
func readKey(desc string) error {
	read := func() error {
		id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", desc, 0)
		if err != nil {
			return err
		}
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err != nil {
			return err
		}
		fmt.Printf("key ok %s\n", buf[:min(n, len(buf))])
		return errReported
	}
	first := read()
	if first == errReported {
		return first
	}
	if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
		return fmt.Errorf("%v; joining a new session keyring: %v", first, e)
	}
	b, _ := os.ReadFile("/proc/keys")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 7 && f[7] == "keyring" {
			if id, err := strconv.ParseUint(f[0], 16, 32); err == nil {
				unix.KeyctlInt(unix.KEYCTL_LINK, int(id), unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
			}
		}
	}
	if err := read(); err != errReported {
		return fmt.Errorf("%v; after linking: %v", first, err)
	}
	return errReported
}
