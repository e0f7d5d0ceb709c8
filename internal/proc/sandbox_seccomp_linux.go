package proc

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// keyringABI is one system-call ABI a sandboxed program may use on this
// machine: its audit architecture (0: do not check) and the numbers of
// add_key, request_key and keyctl in it.
type keyringABI struct {
	arch uint32
	nums []uint32
	x32  bool // x86-64: a number with the x32 bit is another ABI's
}

// keyringABIs are the ABIs of GOARCH, the native one and the 32-bit one
// its kernel may also run (a 32-bit program calls the keyring by other
// numbers).
func keyringABIs() []keyringABI {
	switch runtime.GOARCH {
	case "amd64":
		return []keyringABI{
			{arch: unix.AUDIT_ARCH_X86_64, nums: []uint32{248, 249, 250}, x32: true},
			{arch: unix.AUDIT_ARCH_I386, nums: []uint32{286, 287, 288}},
		}
	case "arm64":
		return []keyringABI{
			{arch: unix.AUDIT_ARCH_AARCH64, nums: []uint32{217, 218, 219}},
			{arch: unix.AUDIT_ARCH_ARM, nums: []uint32{309, 310, 311}},
		}
	}
	return []keyringABI{{nums: []uint32{unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL}}}
}

// keyringFilter is a seccomp program that refuses (EPERM) add_key,
// request_key and keyctl and allows every other call.
func keyringFilter() []unix.SockFilter {
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		// struct seccomp_data: int nr; __u32 arch; …
		offNr, offArch = 0, 4
	)
	var prog []unix.SockFilter
	var toDeny []int // instructions whose jt leads to the refusal
	allow := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}
	for _, abi := range keyringABIs() {
		var block []unix.SockFilter
		var deny []int
		block = append(block, unix.SockFilter{Code: ldAbs, K: offNr})
		if abi.x32 {
			deny = append(deny, len(block))
			block = append(block, unix.SockFilter{Code: jge, K: 0x40000000})
		}
		for _, n := range abi.nums {
			deny = append(deny, len(block))
			block = append(block, unix.SockFilter{Code: jeq, K: n})
		}
		block = append(block, allow)
		if abi.arch != 0 {
			prog = append(prog, unix.SockFilter{Code: ldAbs, K: offArch},
				unix.SockFilter{Code: jeq, K: abi.arch, Jt: 0, Jf: uint8(len(block))})
		}
		for _, i := range deny {
			toDeny = append(toDeny, len(prog)+i)
		}
		prog = append(prog, block...)
	}
	prog = append(prog, allow) // another architecture: no keyring call of ours to refuse
	for _, i := range toDeny {
		prog[i].Jt = uint8(len(prog) - i - 1)
	}
	return append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)})
}

// denyKeyrings keeps this thread, and what it starts, from the kernel's
// keyrings. The session keyring is inherited from whoever started the
// host (a login's, with Kerberos tickets or keys a tool stored there),
// and a user namespace does not hide it: its keys are readable by
// possession, and a keyring joined anew gets them back by linking the old
// one, whose id /proc/keys shows. No_new_privs must be set.
func denyKeyrings() error {
	f := keyringFilter()
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("sandbox: a seccomp filter for the keyrings: %w", err)
	}
	runtime.KeepAlive(f)
	return nil
}
