package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDoctorHelpNamesEveryCheck: doctor --help lists its checks, one per
// line, and its levels; a check the code reports (check("NAME", …)
// anywhere in the package) that the list leaves out is one nobody reading
// the help knows to look for.
func TestDoctorHelpNamesEveryCheck(t *testing.T) {
	long := NewDoctorCmd(NewFactory(), nil).Long
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	re := regexp.MustCompile(`\bcheck\("([a-z]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
	}
	if len(names) < 5 {
		t.Fatalf("found only %d check names in the package's sources: %v", len(names), names)
	}
	for name := range names {
		if !regexp.MustCompile(`(?m)^  ` + name + ` +\S`).MatchString(long) {
			t.Errorf("doctor --help does not list the %q check", name)
		}
	}
	for _, level := range []doctorLevel{doctorPass, doctorNote, doctorWarn, doctorFail} {
		if !strings.Contains(long, string(level)) {
			t.Errorf("doctor --help does not name the level %q", level)
		}
	}
}
