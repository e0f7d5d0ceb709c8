package proc

import "syscall"

// macOS has no child subreaper: a descendant that leaves the server's
// process group and is orphaned goes to launchd, out of our reach.
func becomeSubreaper() error { return nil }

func serverAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func waitServer(pid int) func() syscall.WaitStatus {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return func() syscall.WaitStatus { return ws }
		}
	}
}

func reapChildren() {}

// leftovers reports the group as a whole while it has members.
func leftovers(pgid int) []int {
	if pgid > 1 && syscall.Kill(-pgid, 0) == nil {
		return []int{-pgid}
	}
	return nil
}
