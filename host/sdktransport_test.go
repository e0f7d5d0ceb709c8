package host_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// sdkTransportTests are the tests of what a stdio server's transport
// carries (calls, progress, logging, roots, elicitation, sampling, list
// changes, a crash, garbage and a hang, a kill with its reconnect and
// retry, a timeout's cancel, tasks through internal/tasks). TestStdioTestsOnTheSDKTransport runs them on
// the SDK's own transport too. Left out on purpose: the two diagnoses only
// internal/jsonl makes (TestStdoutBannerBeforeInitializeIsNamed quotes a
// non-JSON line, TestResultOverTheLineLimit names the message limit; the
// SDK's transport reports both as the connection failing), and the tests of
// configuration, routing and policy, which no transport changes.
var sdkTransportTests = []string{
	"TestConnectListCall",
	"TestCrashReasonIsTheErrorNotTheUsage",
	"TestFaultsAreIsolated",
	"TestReconnectAfterKill",
	"TestReconnectGivesUp",
	"TestDiscoverKillRetriesPinned",
	"TestListChangedInvalidatesCache",
	"TestProgressLoggingRootsElicitationSampling",
	"TestHeadlessDeclinesElicitation",
	"TestStdioEnvAndCwd",
	"TestPromptsAndResources",
	"TestPromptsFollowListChanged",
	"TestResourceTemplates",
	"TestProgressAllBeforeResult",
	"TestPermitSeesWhatIsSent",
	"TestUnwrittenCallRunsOnce",
	"TestNonIdempotentCallIsNotRetried",
	"TestRetriedCallKeepsItsDeadline",
	"TestCallTimeoutCancelsOnTheServer",
	"TestToolSearchDefinitionSurvivesReconnect",
	"TestReconnectClosesTheCircuit",
	"TestTaskCallDecidedOnce",
	"TestTaskNotRerunOnReconnect",
	"TestTaskTimeoutCancels",
}

// The host's stdio servers run on internal/jsonl unless
// Options.SDKStdioTransport picks the SDK's mcp.IOTransport. The tests of
// the transport's behaviour run again, in a child test process whose hosts
// (newHost) take the SDK's: jsonl must stay a drop-in for it, and the
// fallback must keep working, until jsonl can go.
func TestStdioTestsOnTheSDKTransport(t *testing.T) {
	if os.Getenv(sdkStdioEnv) == "1" {
		return // this is the child
	}
	t.Parallel() // a process of its own, which runs its tests one at a time
	args := []string{"-test.run=^(" + strings.Join(sdkTransportTests, "|") + ")$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), sdkStdioEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the transport tests on the SDK's transport: %v\n%s", err, out)
	}
	for _, name := range sdkTransportTests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") && !strings.Contains(string(out), "--- SKIP: "+name+" ") {
			t.Errorf("%s did not run on the SDK's transport:\n%s", name, out)
		}
	}
}
