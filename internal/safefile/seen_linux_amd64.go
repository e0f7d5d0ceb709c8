package safefile

import "syscall"

const sysFstatat = syscall.SYS_NEWFSTATAT
