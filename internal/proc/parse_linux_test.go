package proc

import (
	"fmt"
	"strings"
	"testing"
)

// A process names itself (its comm) and writes its own environment, so
// both files the supervisor reads about its servers' descendants are
// input from them.

func FuzzParseStat(f *testing.F) {
	f.Add("sleep", byte('S'), 100, 42)
	f.Add("a) Z 1 1 (b", byte('R'), 1, 1)
	f.Add("", byte('Z'), 0, 0)
	f.Add("x\ny z", byte('D'), 7, 9)
	f.Fuzz(func(t *testing.T, comm string, state byte, ppid, pgrp int) {
		if ppid < 0 || pgrp < 0 || (state|0x20) < 'a' || (state|0x20) > 'z' { // the kernel's state is a letter
			t.Skip()
		}
		line := fmt.Sprintf("123 (%s) %c %d %d 5 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 55 0\n", comm, state, ppid, pgrp)
		got, ok := parseStat([]byte(line))
		if want := (procStat{state, ppid, pgrp, 5}); !ok || got != want {
			t.Errorf("parseStat(%q) = %+v %v, want %+v", line, got, ok, want)
		}
	})
}

func FuzzParseStatNeverPanics(f *testing.F) {
	f.Add([]byte("1 (a) S 0 1"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) { parseStat(b) })
}

func FuzzEnvironTag(f *testing.F) {
	f.Add([]byte("PATH=/bin\x00" + TagEnv + "=7.1\x00"))
	f.Add([]byte(TagEnv + "=\x00" + TagEnv + "=2.2"))
	f.Add([]byte("X" + TagEnv + "=1.1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := ""
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, TagEnv+"="); ok {
				want = v
				break
			}
		}
		if got := environTag(b); got != want {
			t.Errorf("environTag(%q) = %q, want %q", b, got, want)
		}
	})
}
