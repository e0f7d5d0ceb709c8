package gateway

// The principal-scoped "always": an allow rule written to one principal's
// entry of the auth file, so that it holds for that caller only, survives
// restarts and stays where the team can read and revoke it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/policy"
)

// errNoAuthFile is AllowFor's refusal when the Auth reads no file.
var errNoAuthFile = errors.New("the gateway has no auth file to write rules to")

// AddAllow puts rule in the "allow" list of the entry name (a principal,
// or group:<g>) of the auth file at path, creating the entry — holding
// only "allow", as for an access token's caller that has none yet — and
// the file (mode 0600) when they are missing. added is false, and the
// file untouched, when the rule is there already. The edit keeps the
// file's comments and other entries, is serialized with the other edits
// of the file by its lock, and replaces the file atomically. A file that
// cannot be read as an auth file is left as it is, and so is one when
// rule would not take effect (policy.CheckRule).
func AddAllow(path, name, rule string) (added bool, err error) {
	if err := ValidName(strings.TrimPrefix(name, GroupPrefix)); err != nil {
		return false, err
	}
	if problem, fix := policy.CheckRule(policy.Allow, rule); problem != "" {
		return false, fmt.Errorf("allow rule %q: %s (%s)", rule, problem, fix)
	}
	err = editAuthFile(path, func(f *AuthFile) ([]patchOp, error) {
		p := "/principals/" + pointerEscape(name)
		e := f.Principals[name]
		switch {
		case e == nil:
			added = true
			return []patchOp{{"add", p, map[string]any{"allow": []string{rule}}}}, nil
		case slices.Contains(e.Allow, rule):
			return nil, nil
		case e.Allow == nil:
			added = true
			return []patchOp{{"add", p + "/allow", []string{rule}}}, nil
		}
		added = true
		return []patchOp{{"add", p + "/allow/-", rule}}, nil
	})
	if err != nil {
		return false, err
	}
	return added, nil
}

// CanAllowFor reports whether [Auth.AllowFor] can write rules for the
// principal p: a's auth file loads and may be written — its folder is
// writable (not a read-only mount, as a Kubernetes Secret's is) and the
// file, if there is one, has its owner's write bit (an administrator's
// chmod 400 says no) — and p is a principal of the team, a holder of its
// keys or the bearer of an access token, whose name can be an entry of
// the file. The shared token stands for whoever runs the gateway and is
// not one (its "always" writes to the host's settings); neither is a
// token's name that an entry cannot have (letters, digits, '.', '_', '@'
// and '-', at most 64): writing it would break the file.
func (a *Auth) CanAllowFor(p *Principal) bool {
	if a == nil || a.file == "" || !p.Keyed() || p.Name == SharedTokenPrincipal || ValidName(p.Name) != nil || a.LoadErr() != nil {
		return false
	}
	if fi, err := os.Stat(a.file); err == nil && fi.Mode().Perm()&0o200 == 0 {
		return false
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	// The nearest folder there is: AddAllow makes the missing ones.
	dir := filepath.Dir(a.file)
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	return dirWritable(dir)
}

// AllowFor writes rule to the allow list of principal name's entry of
// a's auth file ([AddAllow]) and loads the file again at once, so that
// the very next call of that principal is decided with the rule, without
// waiting for the file watcher. A deny anywhere (managed settings, the
// principal's own or a group's) still beats it. It is safe for concurrent
// use.
func (a *Auth) AllowFor(name, rule string) error {
	if a == nil || a.file == "" {
		return errNoAuthFile
	}
	added, err := AddAllow(a.file, name, rule)
	if err != nil || !added {
		return err
	}
	return a.Reload()
}

// AllowWhere says in a few words where AllowFor writes the rules of
// principal name, for a question: "alice's entry in
// ~/.switchboard/gateway-auth.json" (the home directory shown as ~).
func (a *Auth) AllowWhere(name string) string {
	return name + "'s entry in " + homeTilde(a.file)
}

// homeTilde shows path under the home directory as ~/…, as a person
// would write it.
func homeTilde(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(home, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return path
	}
	return "~" + string(filepath.Separator) + rel
}

// permitAuthKey carries, to the Asker, the Auth whose rules decided the
// call ([NewPermit]): an "always" of one of its principals is written
// there, where that decision will read it.
type permitAuthKey struct{}

func permitAuthFrom(ctx context.Context) *Auth {
	a, _ := ctx.Value(permitAuthKey{}).(*Auth)
	return a
}
