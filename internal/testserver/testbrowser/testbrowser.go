// Package testbrowser starts Debian's chromium, headless with a fresh
// profile, for end-to-end tests of the console (chromedp). Without
// chromium a test is skipped, or fails under CI=true.
package testbrowser

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start returns a chromedp context of a new headless browser, closed when
// t ends; its actions have three minutes.
func Start(t testing.TB) context.Context {
	t.Helper()
	exe := ""
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is missing (apt-get install chromium; .ci/run installs it)")
		}
		t.Skip("chromium is not installed")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 800),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first action starts the browser, with no deadline (that would
	// stop the browser); the test's actions get one.
	if _, err := chromedp.Run(ctx, chromedp.Location()); err != nil {
		t.Fatalf("chromium did not start: %v", err)
	}
	ctx, cancel3 := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel3)
	return ctx
}
