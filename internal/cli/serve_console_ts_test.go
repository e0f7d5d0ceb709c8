package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/testserver/testbrowser"
)

// Issue 33's "answer a gateway client's ask in the page while a TS SDK
// client waits": the official TypeScript SDK's client, which declares no
// elicitation, calls a tool no rule allows through serve --http; bob, who
// signed in to the console in a real browser (chromium), sees the question
// on the Questions page and answers it there; the waiting call then runs,
// and the audit line says it was asked and answered.
func TestGatewayConsoleAnswersATypeScriptClient(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, nil, nil) // no rule: every call is asked about
	bob := w.addKey(t, "bob")
	auditPath := filepath.Join(w.dir, "audit.jsonl")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--audit-log", auditPath)
	defer stop()

	// Signed in first: a question waits in the console only when somebody
	// who could answer it has used the console lately.
	bctx := testbrowser.Start(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), bob), chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#who"))); err != nil {
		t.Fatalf("signing in: %v", err)
	}

	wait := startTSClient(t, w, []string{"TOKEN=" + bob, "NO_ELICIT=1", `CALLS=[["alpha__echo", {"text": "answered in chromium"}]]`}, "http", base+"/mcp")
	type outcome struct {
		res tsResult
		err error
	}
	done := make(chan outcome, 1)
	go func() { r, err := wait(); done <- outcome{r, err} }()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	button := `form[data-tool="mcp__alpha__echo"] button[value="once"]`
	for {
		if err := chromedp.Do(bctx, chromedp.Navigate(base+"/ui/asks")); err != nil {
			t.Fatal(err)
		}
		shown, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelector('`+button+`') !== null`))
		if err != nil {
			t.Fatal(err)
		}
		if shown {
			break
		}
		select {
		case o := <-done:
			t.Fatalf("the TypeScript client's call ended before its question was shown: %+v %v", o.res, o.err)
		case <-ctx.Done():
			t.Fatal("the question never showed in the console")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS("#message"))); err != nil {
		t.Fatal(err)
	}
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		t.Fatal("the TypeScript client's call did not end after the answer")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if c := o.res.Calls["alpha__echo"]; c.IsError || !strings.Contains(c.Text, "answered in chromium") {
		t.Errorf("the TypeScript client's call after the answer: %+v", c)
	}
	if len(o.res.Asked) != 0 {
		t.Errorf("the client that declared no elicitation was asked: %v", o.res.Asked)
	}
	audit, _ := os.ReadFile(auditPath)
	if !strings.Contains(string(audit), `"principal":"bob"`) || !strings.Contains(string(audit), `"asked":true,"answer":"once"`) {
		t.Errorf("the call's audit line:\n%s", audit)
	}
}
