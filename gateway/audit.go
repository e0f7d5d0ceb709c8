package gateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// Defaults of an AuditLog.
const (
	// DefaultAuditMaxSize is the size at which the audit log is rotated.
	DefaultAuditMaxSize = 100 << 20
	// DefaultAuditKeep is how many rotated files are kept (<file>.1 is the
	// newest).
	DefaultAuditKeep = 5
)

// AuditEntry is one line of the audit log: one tool call.
type AuditEntry struct {
	Time time.Time `json:"time"`
	// Principal and Groups say who called ("" over stdio or an HTTP
	// gateway without authentication).
	Principal string   `json:"principal,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	// Session is a digest of the client's session id (the id itself is a
	// credential of sorts): equal digests are one session.
	Session string `json:"session,omitempty"`
	// Tool is the rule name mcp__<server>__<tool> (the served name for the
	// gateway's own tools and names it does not serve).
	Tool   string `json:"tool"`
	Server string `json:"server,omitempty"`
	// Credential, for a server whose principals call it with their own
	// credentials (AuthFile.PerMember), is whose were used: the
	// principal's name, "shared" (the gateway's) or "none" (refused).
	// Never a value.
	Credential string `json:"credential,omitempty"`
	ServerTool string `json:"server_tool,omitempty"`
	// Decision is allow, ask, deny or rate_limited ("" when no rule was
	// consulted: an unknown tool, a gateway without rules), Rule the rule
	// that made it and RuleSource where that rule is written.
	Decision   string `json:"decision,omitempty"`
	Rule       string `json:"rule,omitempty"`
	RuleSource string `json:"rule_source,omitempty"`
	// Asked reports that a person was asked; Answer is what they answered
	// (once, session, always, deny, decline, cancel), or session-grant
	// when an earlier "session" answer let the call run.
	Asked  bool   `json:"asked"`
	Answer string `json:"answer,omitempty"`
	// ToolChange, for a call of a tool that tool pinning holds (its
	// definition changed since it was pinned), is what became of the
	// change: accept (the person accepted it when asked: it was pinned
	// and the call made), hold, decline or cancel (it stays held, the
	// call was refused), or not_asked (nobody could be asked). Never the
	// definition itself.
	ToolChange  string  `json:"tool_change,omitempty"`
	DurationMS  float64 `json:"duration_ms"`
	ResultBytes int     `json:"result_bytes"`
	IsError     bool    `json:"is_error"`
	Error       string  `json:"error,omitempty"`
	// ArgsHMAC is the HMAC-SHA256, under the install's audit key, of the
	// arguments' canonical JSON: equal arguments have equal hashes, and
	// nobody without the key can test a guess. Args are the arguments
	// with secrets redacted and long strings cut; never raw: the value of
	// a secret-named key, the shapes secrets take in text, credentials of
	// a known form (ghp_…, sk-…, AKIA…, JSON Web Tokens; see
	// internal/redact) and every secret value the host gave its servers
	// (host.Host.Redact) are "<redacted>". Error is scrubbed the same way.
	ArgsHMAC string         `json:"args_hmac,omitempty"`
	Args     map[string]any `json:"args,omitempty"`
	// ArgsCut, when the arguments so redacted and cut still take more
	// than AuditArgsMax bytes of JSON (thousands of keys), is how many:
	// Args is then left out (ArgsHMAC is still of all of them).
	ArgsCut int `json:"args_cut,omitempty"`
	// Hooks are the call hooks' decisions on the call (allow, deny,
	// redact, error), Findings the deceptive text found in its result
	// (removed or made visible before the model read it) and Secrets what
	// was done about secrets in its arguments and result (docs/security.md,
	// What the model reads).
	Hooks    []host.HookDecision `json:"hooks,omitempty"`
	Findings []string            `json:"findings,omitempty"`
	Secrets  []string            `json:"secrets,omitempty"`
}

// AuditOptions configure an AuditLog. A nil *AuditOptions uses every
// default.
type AuditOptions struct {
	// Key is the HMAC key of ArgsHMAC. If empty, a random key for this
	// process is used (hashes then compare only within one run); see
	// LoadAuditKey for a key per install.
	Key []byte
	// MaxSize rotates the file before a line would take it past this many
	// bytes. If <= 0, DefaultAuditMaxSize.
	MaxSize int64
	// Keep is how many rotated files are kept. If <= 0, DefaultAuditKeep.
	Keep int
	// Logger receives write failures. If nil, they are discarded.
	Logger *slog.Logger
}

// AuditLog appends one JSON line per tool call to a file opened for
// appending only (mode 0600), rotated by size: <file> → <file>.1 → … →
// <file>.<Keep>. It is safe for concurrent use.
type AuditLog struct {
	path string
	key  []byte
	max  int64
	keep int
	log  *slog.Logger

	// macs are HMAC-SHA256 states under key, reset: a new one costs
	// two digests' allocations and the key's padding.
	macs sync.Pool

	mu   sync.Mutex
	f    *os.File
	size int64
	// torn: the last write put part of a line in the file and it could
	// not be taken out; the next line is written after a newline.
	torn bool
	// noRotate: a rotation could not move the file.
	noRotate bool
	// closed: Close was called (f is also nil, for a while, after a
	// rotation that could not open the next file).
	closed bool
	// recent are the last lines written (RecentAudit of them), for a
	// console's Calls page: a ring, whose oldest line is at head once it
	// is full, so that a line written moves no other.
	recent []AuditEntry
	head   int
}

// RecentAudit is how many of the last lines an AuditLog keeps in memory.
const RecentAudit = 200

// Recent returns the last lines written (at most RecentAudit), newest
// first: what the file holds, secrets redacted.
func (l *AuditLog) Recent() []AuditEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.recent)
	out := make([]AuditEntry, n)
	for i := range out {
		out[i] = l.recent[(l.head-1-i+n)%n]
	}
	return out
}

// OpenAudit opens (creating it and its folder) the audit log at path.
func OpenAudit(path string, opts *AuditOptions) (*AuditLog, error) {
	l := &AuditLog{path: path}
	if opts != nil {
		l.key, l.max, l.keep, l.log = opts.Key, opts.MaxSize, opts.Keep, opts.Logger
	}
	if len(l.key) == 0 {
		l.key = make([]byte, 32)
		if _, err := rand.Read(l.key); err != nil {
			return nil, fmt.Errorf("audit key: %w", err)
		}
	}
	if l.max <= 0 {
		l.max = DefaultAuditMaxSize
	}
	if l.keep <= 0 {
		l.keep = DefaultAuditKeep
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// open opens the file at l.path, which must be a regular file: a
// symbolic link is refused (whoever can write the log's folder, or swap
// the file between rotations, would have the gateway append to any file
// it can write), and so is a named pipe or a device (a pipe nobody reads
// would hold every call at its audit line).
func (l *AuditLog) open() error {
	if fi, err := os.Lstat(l.path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("opening the audit log: %s is a symbolic link; give the file itself", l.path)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|auditOpenFlags, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the audit log: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("opening the audit log: %s is not a regular file", l.path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		// Made by someone else, or by hand: left as it is (a log
		// shipper may read it), but said, as it is created 0600.
		l.log.Warn("the audit log can be read by others than its owner (chmod 600 it)", "path", l.path, "mode", fi.Mode().Perm().String())
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Path returns the file's path.
func (l *AuditLog) Path() string { return l.path }

// Close closes the file. Lines written after it are dropped.
func (l *AuditLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// auditArgMax cuts each string of the redacted arguments.
const auditArgMax = 200

// AuditArgsMax is the most bytes of JSON an audit line's arguments take;
// past it they are left out of the line (AuditEntry.ArgsCut).
const AuditArgsMax = 16 << 10

// auditNameMax cuts a line's tool and server names, and auditTextMax its
// error and hook reasons (which may quote a name), in characters.
const (
	auditNameMax = 256
	auditTextMax = 1024
)

// cutString is s cut to max characters, with "…" for what was cut.
func cutString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// write fills e's argument fields from raw and appends e. scrub (nil:
// none) removes the known secret values from every string written, after
// the redaction by key and shape and before strings are cut (a cut
// secret would not be found).
func (l *AuditLog) write(e *AuditEntry, raw json.RawMessage, scrub func(string) string) {
	if scrub == nil {
		scrub = func(s string) string { return redact.String(s) }
	}
	e.Error = cutString(scrub(e.Error), auditTextMax)
	for i := range e.Hooks {
		e.Hooks[i].Reason = cutString(scrub(e.Hooks[i].Reason), auditTextMax)
	}
	// A name the gateway does not serve is the caller's to choose, up to
	// the 4 MiB of a request: cut, or a few calls would fill the log,
	// and the lines kept for the console (RecentAudit) the memory.
	e.Tool, e.Server, e.ServerTool = cutString(e.Tool, auditNameMax), cutString(e.Server, auditNameMax), cutString(e.ServerTool, auditNameMax)
	if args, ok := auditArgs(raw); ok {
		// The canonical JSON (map keys sorted) is what json.Marshal
		// writes.
		lb := getLineBuf()
		if b, ok := appendValue(lb.b[:0], args); ok {
			lb.b = b
			e.ArgsHMAC = l.mac(b)
		} else if b, err := json.Marshal(args); err == nil {
			e.ArgsHMAC = l.mac(b)
		}
		putLineBuf(lb)
		e.Args = cutStrings(redact.EachString(redact.Args(args), scrub)).(map[string]any)
		// Each string is cut, but not their number: a request's 4 MiB
		// of short keys would be a line of megabytes, and the lines
		// kept for the console (RecentAudit) gigabytes. A small
		// request cannot come near the bound (its JSON at most grows
		// sixfold, "<" written \u003c), and is not measured.
		if len(raw) > AuditArgsMax/8 {
			lb := getLineBuf()
			if b, ok := appendValue(lb.b[:0], e.Args); ok && len(b) > AuditArgsMax {
				e.Args, e.ArgsCut = nil, len(b)
			}
			putLineBuf(lb)
		}
	} else if len(raw) > 0 {
		e.ArgsHMAC = l.mac(raw)
	}
	if err := l.Write(e); err != nil {
		l.log.Warn("audit line not written", "error", err)
	}
}

// auditArgs decodes a call's arguments, a JSON object, as json.Unmarshal
// into a map[string]any does (decodeObject where it can: without
// reflection).
func auditArgs(raw []byte) (map[string]any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	if args, handled := decodeObject(raw, unmarshalValue); handled {
		return args, true
	}
	var args map[string]any
	return args, json.Unmarshal(raw, &args) == nil && args != nil
}

// mac returns the hex HMAC-SHA256 of b under the log's key.
func (l *AuditLog) mac(b []byte) string {
	m, _ := l.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, l.key)
	}
	m.Write(b)
	var sum [sha256.Size]byte
	s := hex.EncodeToString(m.Sum(sum[:0]))
	m.Reset()
	l.macs.Put(m)
	return s
}

// lineBuf holds a line while it is written: a line is encoded into
// bytes kept from an earlier one.
type lineBuf struct{ b []byte }

var lineBufs sync.Pool

func getLineBuf() *lineBuf {
	if lb, _ := lineBufs.Get().(*lineBuf); lb != nil {
		return lb
	}
	return &lineBuf{b: make([]byte, 0, 1024)}
}

// putLineBuf keeps lb for another line, unless a long line grew it.
func putLineBuf(lb *lineBuf) {
	if cap(lb.b) > 64<<10 {
		return
	}
	lineBufs.Put(lb)
}

func cutStrings(v any) any {
	switch v := v.(type) {
	case string:
		return cutString(v, auditArgMax)
	case map[string]any:
		var cut map[string]any
		for k, e := range v {
			e = cutStrings(e)
			if ck := cutString(k, auditArgMax); ck != k {
				// A key is the caller's to choose too, as long as
				// a request.
				if cut == nil {
					cut = map[string]any{}
				}
				cut[ck] = e
				delete(v, k)
				continue
			}
			v[k] = e
		}
		for k, e := range cut {
			v[k] = e
		}
	case []any:
		for i, e := range v {
			v[i] = cutStrings(e)
		}
	}
	return v
}

// Write appends e as one line, rotating first when the line would take the
// file past MaxSize.
func (l *AuditLog) Write(e *AuditEntry) error {
	lb := getLineBuf()
	defer putLineBuf(lb)
	b, ok := appendEntry(lb.b[:0], e)
	if !ok {
		m, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b = append(b[:0], m...)
	}
	b = append(b, '\n')
	lb.b = b
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("the audit log is closed")
	}
	if l.f == nil {
		// A rotation could not open the next file (the disk was full,
		// its folder refused): try again with each line, or the log
		// would stay shut, every call unaudited, after the disk had
		// room again.
		if err := l.open(); err != nil {
			return err
		}
	}
	if l.torn {
		// A line cut short by a failed write ends here.
		n, err := l.f.Write([]byte{'\n'})
		l.size += int64(n)
		if err != nil {
			return err
		}
		l.torn = false
	}
	if !l.noRotate && l.size > 0 && l.size+int64(len(b)) > l.max {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(b)
	if err != nil && n > 0 {
		// Part of the line went in (the disk filled): take it out,
		// or the next line would be appended to it and a reader
		// would parse the two as one broken line (or, cut where a
		// string was open, as something neither said). Where it
		// cannot be taken out, the next line starts on a line of its
		// own.
		// The file's own size, not l.size: someone may have cut the
		// file since (copytruncate), and a truncate past its end
		// would fill it with zeros.
		fi, serr := l.f.Stat()
		if serr != nil || fi.Size() < int64(n) || l.f.Truncate(fi.Size()-int64(n)) != nil {
			l.size += int64(n)
			l.torn = true
		}
		return err
	}
	l.size += int64(n)
	if err == nil {
		if len(l.recent) < RecentAudit {
			l.recent = append(l.recent, *e)
		} else {
			l.recent[l.head] = *e
			l.head = (l.head + 1) % RecentAudit
		}
	}
	return err
}

func (l *AuditLog) rotate() error {
	if err := l.f.Close(); err != nil {
		l.log.Warn("closing the audit log", "error", err)
	}
	l.f = nil
	for i := l.keep - 1; i >= 1; i-- {
		from := l.path + "." + strconv.Itoa(i)
		if err := os.Rename(from, l.path+"."+strconv.Itoa(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.log.Warn("rotating the audit log", "error", err)
		}
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// The file cannot be moved (made append-only, chattr +a; a
		// folder that refuses): the lines go on into it, past its
		// size, and it is not rotated again (each try would move the
		// older files once more, the oldest lost each time).
		l.log.Warn("the audit log cannot be rotated; it grows past its size", "error", err)
		l.noRotate = true
	}
	return l.open()
}

// LoadAuditKey returns the install's audit key from path, creating it
// (32 random bytes, hex, mode 0600) when it does not exist.
func LoadAuditKey(path string) ([]byte, error) {
	b, err := safefile.ReadFile(path)
	if err == nil {
		key, derr := hex.DecodeString(string(bytes.TrimRight(b, "\n\r ")))
		if derr != nil || len(key) < 16 {
			return nil, fmt.Errorf("%s does not hold an audit key (hex, at least 16 bytes); remove it to make a new one", path)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the audit key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadAuditKey(path) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("writing the audit key: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(key) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("writing the audit key: %w", werr)
	}
	return key, nil
}
