package proc

import (
	"golang.org/x/sys/unix"
)

// localFS are the filesystems whose files are on this machine: an exec
// from them cannot wait on a server elsewhere.
var localFS = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // also ext2 and ext3
	unix.XFS_SUPER_MAGIC:       true,
	unix.BTRFS_SUPER_MAGIC:     true,
	unix.F2FS_SUPER_MAGIC:      true,
	unix.REISERFS_SUPER_MAGIC:  true,
	unix.NILFS_SUPER_MAGIC:     true,
	0x3153464a:                 true, // jfs
	0x2fc12fc1:                 true, // zfs
	0xca451a4e:                 true, // bcachefs
	unix.TMPFS_MAGIC:           true, // also devtmpfs
	unix.RAMFS_MAGIC:           true,
	unix.OVERLAYFS_SUPER_MAGIC: true, // containers' root
	unix.SQUASHFS_MAGIC:        true, // snaps, AppImages
	unix.EROFS_SUPER_MAGIC_V1:  true,
	unix.ISOFS_SUPER_MAGIC:     true,
	unix.UDF_SUPER_MAGIC:       true,
	unix.MSDOS_SUPER_MAGIC:     true, // vfat
	unix.EXFAT_SUPER_MAGIC:     true,
	0x5346544e:                 true, // ntfs
	0x7366746e:                 true, // ntfs3
	unix.PROC_SUPER_MAGIC:      true,
	unix.SYSFS_MAGIC:           true,
}

// mayHang reports whether an exec from path, or a chdir into it, could
// wait for ever: it is on a filesystem not known to be local (NFS, SMB,
// 9p, FUSE such as sshfs, Ceph, AFS, autofs…), or its filesystem cannot
// be told. The statfs itself runs in the host, where a hang holds up only
// this Start.
func mayHang(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return true
	}
	return !localFS[int64(st.Type)]
}
