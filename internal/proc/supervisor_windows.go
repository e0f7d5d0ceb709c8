package proc

import (
	"fmt"
	"os"
)

// Windows needs no supervisor: a Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE already ends every process of the tree
// when the host dies.
const canSupervise = false

func runSupervisor([]string) int {
	fmt.Fprintln(os.Stderr, "switchboard supervisor: not used on Windows")
	return 2
}

func runExecHelper([]string) int {
	fmt.Fprintln(os.Stderr, "switchboard exec helper: not used on Windows")
	return 2
}

// mayHang: nothing is supervised on Windows.
func mayHang(string) bool { return false }

func startSupervised(*Process, string, []string, spawnReq, []*os.File) (int, error, bool) {
	return 0, fmt.Errorf("no supervisor on Windows"), false
}

// testHooks has no use on Windows (see supervisor_unix.go).
var testHooks bool

const slowSpawnEnv = "SWITCHBOARD_PROC_TEST_SLOW_SPAWN"
