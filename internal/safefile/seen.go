package safefile

import "os"

// Seen is a file as a reader last read it, so that the reader notices
// when another process changed it (the trust store, the tool pins). The
// zero Seen has seen no file.
type Seen struct {
	fi    os.FileInfo // nil: the file did not exist
	quick quickStat   // seen_linux.go: the same question without the scheduler
}

// Remember records the file at path as it is now: read it after.
func (s *Seen) Remember(path string) { s.fi, _ = os.Stat(path) }

// Changed reports whether path is not the file last remembered: it was
// replaced (a write that renames a new file in), changed in place or
// removed, or it exists where none did.
//
// A gateway asks this before every call (the pins), so where it can the
// answer "the same file" comes from quickStat; everything else is decided
// here, by os.Stat.
func (s *Seen) Changed(path string) bool {
	if s.quick.same(path, s.fi) {
		return false
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil && s.fi == nil:
		return false
	case err == nil && s.fi != nil && os.SameFile(fi, s.fi) &&
		fi.ModTime().Equal(s.fi.ModTime()) && fi.Size() == s.fi.Size() && fi.Mode() == s.fi.Mode():
		return false
	}
	return true
}
