// Package testfuse mounts a real FUSE filesystem for tests: files served by
// a daemon in the test process, which can be made to stall as a hung
// network mount (NFS, SMB, sshfs…) does. The kernel then keeps whoever
// touches the mount waiting, exactly as it would for a dead file server;
// a SIGKILL still frees them.
//
// Mounting needs /dev/fuse and root (the daemon mounts directly, without
// fusermount); Mount skips the test otherwise.
package testfuse
