// Package host spawns processes.
package host

import _ "os/exec"
