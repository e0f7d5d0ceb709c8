package proc

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysState holds the Job Object the server's tree runs in. With
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE the tree dies when the handle is
// closed, which Windows also does when the host dies, however it dies.
type sysState struct {
	job windows.Handle
}

func (p *Process) prepare() {
	// Suspended until it is in the job, so nothing it spawns escapes;
	// a group of its own so CTRL_BREAK reaches only it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP,
	}
}

func (p *Process) spawn() error {
	job, err := windows.CreateJobObject(nil, nil) // not inheritable: only we hold it
	if err != nil {
		return fmt.Errorf("CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("SetInformationJobObject: %w", err)
	}
	if err := p.cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return err
	}
	pid := uint32(p.cmd.Process.Pid)
	if err := assignAndResume(job, pid); err != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		windows.CloseHandle(job)
		return err
	}
	p.sys.job = job
	return nil
}

func assignAndResume(job windows.Handle, pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return fmt.Errorf("OpenProcess: %w", err)
	}
	err = windows.AssignProcessToJobObject(job, h)
	windows.CloseHandle(h)
	if err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	// os/exec closes the thread handle, so find the (single) thread again.
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := false
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("OpenThread: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("ResumeThread: %w", err)
		}
		resumed = true
	}
	if !resumed {
		return errors.New("no thread to resume")
	}
	return nil
}

// signal: Windows has no SIGTERM; CTRL_BREAK is the nearest polite request
// (it reaches console programs sharing our console). Kill ends the job.
func (p *Process) signal(k sigKind) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return nil
	}
	if k == sigTerm {
		windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.cmd.Process.Pid))
		return nil
	}
	return windows.TerminateJobObject(p.sys.job, 1)
}

func (p *Process) killDirect() { p.signal(sigKill) }

func (p *Process) waitOS() error {
	err := p.cmd.Wait()
	p.mu.Lock()
	p.exited = true
	windows.CloseHandle(p.sys.job) // kills whatever the server left in the job
	p.mu.Unlock()
	return err
}

func (p *Process) killSupervisor() {}

func (p *Process) inKernel() (byte, bool) { return 0, false }
