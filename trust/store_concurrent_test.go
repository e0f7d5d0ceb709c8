package trust

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

// approveChildEnv makes the test binary a child process that approves
// servers in workspace /ws of a store (see TestMain): its value is
// "<home>|<name>,<name>,…".
const approveChildEnv = "SWITCHBOARD_TEST_TRUST_APPROVE_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(approveChildEnv); spec != "" {
		home, names, _ := strings.Cut(spec, "|")
		s := Open(home)
		for _, name := range strings.Split(names, ",") {
			if _, err := s.Approve("/ws", repoServer(name, config.Server{Command: name}), t0); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Approvals given at once — by other processes (parallel `mcp approve`)
// and by goroutines each with its own Store — are all kept.
func TestStoreKeepsParallelApprovals(t *testing.T) {
	home := t.TempDir()
	const procs, goroutines, each = 3, 6, 3
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		want []string
	)
	fail := func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	for p := range procs {
		var names []string
		for i := range each {
			names = append(names, fmt.Sprintf("proc%d-%d", p, i))
		}
		want = append(want, names...)
		wg.Go(func() {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), approveChildEnv+"="+home+"|"+strings.Join(names, ","))
			if out, err := cmd.CombinedOutput(); err != nil {
				fail(fmt.Errorf("child approving %v: %v: %s", names, err, out))
			}
		})
	}
	for g := range goroutines {
		s := Open(home) // one Store per goroutine: as separate processes
		for i := range each {
			name := fmt.Sprintf("go%d-%d", g, i)
			want = append(want, name)
			wg.Go(func() {
				if _, err := s.Approve("/ws", repoServer(name, config.Server{Command: name}), t0); err != nil {
					fail(err)
				}
			})
		}
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	slices.Sort(want)
	s := Open(home)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Approved("/ws")); diff != "" {
		t.Errorf("approved in /ws (-want +got):\n%s", diff)
	}
}
