package gateway

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// Scale-out with sessions (HTTPOptions.ScaleOut; serve --stateless
// --session-key-file FILE).
//
// A stateless gateway serves a client on protocol 2026-07-28 per request,
// as that protocol wants. A client on an earlier protocol (one that sends
// initialize: Claude Code, the Inspector, most clients today) needs a
// session, and what the session holds — its grants ("allow for this
// session"), its protocol version, its stream, the questions an upstream
// server asks during a call — lives in the instance that holds it. So
// such a client gets a real session on the instance its initialize
// reached, and the session's ID carries that instance's address, sealed
// (AES-256-GCM) with a key the instances share: any instance that a later
// request of the session reaches opens the ID and passes the request to
// the instance that holds it, as Envoy's stateful-session filter does with
// an encoded upstream address. No sticky balancer, no shared store; a
// client cannot steer a request anywhere (an ID it made up does not open),
// and the instance the request is passed to checks its credentials again.
// When the instance that held a session is gone, its requests are answered
// 404, on which a client starts a new session (the MCP transport's rule).

// SessionIDPrefix begins the IDs of a scale-out gateway's sessions.
const SessionIDPrefix = "sb1."

// hopHeader marks a request one instance passed to another: it is never
// passed on again (two instances that advertise each other's address
// would otherwise pass it round).
const hopHeader = "Switchboard-Forwarded"

// The errors of a session key file that cannot be used (errors.Is).
var (
	// ErrSessionKeyFileMode: the file is readable by others.
	ErrSessionKeyFileMode = errors.New("readable by others")
	// ErrNoSessionKey: the file holds no key.
	ErrNoSessionKey = errors.New("holds no key")
	// ErrBadSessionKey: a line is not a key.
	ErrBadSessionKey = errors.New("not a key of 32 bytes in base64 or hex")
)

// SessionKeys seal and open session IDs: the first key seals, every key
// opens (rotation: put the new key first on every instance, keep the old
// one after it until its sessions are gone, then drop it).
type SessionKeys struct {
	aeads []cipher.AEAD
}

// ReadSessionKeys reads a session key file (serve --session-key-file):
// one key per line, 32 random bytes in base64 (standard or URL alphabet,
// padded or not) or 64 hex digits; blank lines and lines starting with #
// are skipped. The file must not be readable by others, and must hold a
// key. The errors name the file.
func ReadSessionKeys(path string) (*SessionKeys, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := CheckSessionKeyFileMode(path, fi); err != nil {
		return nil, err
	}
	b, err := safefile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ks, err := ParseSessionKeys(path, b)
	if err != nil {
		return nil, err
	}
	if len(ks.aeads) == 0 {
		return nil, fmt.Errorf("%s %w", path, ErrNoSessionKey)
	}
	return ks, nil
}

// CheckSessionKeyFileMode refuses a key file (at path, fi its Stat) that
// others may read: ErrSessionKeyFileMode.
func CheckSessionKeyFileMode(path string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is %w (mode %04o): its keys open every session's ID", path, ErrSessionKeyFileMode, fi.Mode().Perm())
	}
	return nil
}

// ParseSessionKeys reads the keys in the contents b of the key file at
// path, which may hold none.
func ParseSessionKeys(path string, b []byte) (*SessionKeys, error) {
	ks := &SessionKeys{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, err := decodeSessionKey(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		block, _ := aes.NewCipher(key)
		aead, _ := cipher.NewGCM(block)
		ks.aeads = append(ks.aeads, aead)
	}
	return ks, nil
}

func decodeSessionKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	if k, err := hex.DecodeString(s); err == nil && len(k) == 32 {
		return k, nil
	}
	return nil, ErrBadSessionKey
}

// Len returns the number of keys.
func (ks *SessionKeys) Len() int { return len(ks.aeads) }

// Seal returns a session ID holding owner (the instance's URL).
func (ks *SessionKeys) Seal(owner string) string {
	aead := ks.aeads[0]
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	// A random part makes each ID unique even for one owner.
	plain := owner + "\n" + rand.Text()
	out := aead.Seal(nonce, nonce, []byte(plain), []byte(SessionIDPrefix))
	return SessionIDPrefix + base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the owner sealed in id, or false if no key opens it.
func (ks *SessionKeys) Open(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, SessionIDPrefix)
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return "", false
	}
	for _, aead := range ks.aeads {
		n := aead.NonceSize()
		if len(b) < n+aead.Overhead() {
			return "", false
		}
		plain, err := aead.Open(nil, b[:n], b[n:], []byte(SessionIDPrefix))
		if err != nil {
			continue
		}
		owner, _, ok := strings.Cut(string(plain), "\n")
		return owner, ok && owner != ""
	}
	return "", false
}

// SessionKeyRing is a scale-out gateway's session keys as its key file
// holds them now. Instances pick up a rotated key file without a restart: the
// file is read again — with the checks made at start (mode 0600, a key a
// line, at least one) — when it has changed (another inode, size or
// modification time) before a new session ID is sealed, when an ID does
// not open, and whenever Refresh is called (serve's watcher calls it when
// the file changes). So an
// instance seals with the key put first as soon as it has the file, and
// one that meets an ID sealed with a key it has not read yet reads the
// file before it answers 404. A file that fails the checks keeps the keys
// in force (the log says why) until it is fixed.
type SessionKeyRing struct {
	path string
	log  atomic.Pointer[slog.Logger]
	// rekeyed, if set, runs after the keys changed.
	rekeyed func()

	cur  atomic.Pointer[SessionKeys]
	mu   sync.Mutex  // one read at a time
	seen fs.FileInfo // the file as last read (or found unusable)
}

// NewSessionKeyRing reads the key file at path (ReadSessionKeys). Its
// later reads are logged to log (nil: discarded).
func NewSessionKeyRing(path string, log *slog.Logger) (*SessionKeyRing, error) {
	ks, err := ReadSessionKeys(path)
	if err != nil {
		return nil, err
	}
	k := &SessionKeyRing{path: path}
	k.SetLogger(log)
	k.cur.Store(ks)
	k.seen, _ = os.Stat(path)
	return k, nil
}

// SetLogger makes log (nil: none) receive the ring's later reads.
func (k *SessionKeyRing) SetLogger(log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k.log.Store(log)
}

// File returns the key file's path.
func (k *SessionKeyRing) File() string { return k.path }

// Keys returns the keys in force.
func (k *SessionKeyRing) Keys() *SessionKeys { return k.cur.Load() }

// Refresh reads the key file again if it changed since it was last read,
// and reports whether the keys changed.
func (k *SessionKeyRing) Refresh() bool {
	k.mu.Lock()
	fi, err := os.Stat(k.path)
	if err == nil && k.seen != nil && os.SameFile(fi, k.seen) && fi.Size() == k.seen.Size() && fi.ModTime().Equal(k.seen.ModTime()) {
		k.mu.Unlock()
		return false
	}
	if err != nil && k.seen == nil {
		k.mu.Unlock()
		return false // gone, and already reported
	}
	k.seen = fi
	ks, err := ReadSessionKeys(k.path)
	if err != nil {
		k.mu.Unlock()
		k.log.Load().Warn("the session key file cannot be used; the keys read before stay in force until it is fixed", "file", k.path, "error", err)
		return false
	}
	k.cur.Store(ks)
	k.mu.Unlock()
	k.log.Load().Info("session keys read again", "file", k.path, "keys", len(ks.aeads))
	if k.rekeyed != nil {
		k.rekeyed()
	}
	return true
}

// Seal seals owner with the first key of the file as it is now.
func (k *SessionKeyRing) Seal(owner string) string {
	k.Refresh()
	return k.Keys().Seal(owner)
}

// Open opens id with the keys of the file as it is now.
func (k *SessionKeyRing) Open(id string) (string, bool) {
	if owner, ok := k.Keys().Open(id); ok {
		return owner, true
	}
	if k.Refresh() {
		return k.Keys().Open(id)
	}
	return "", false
}

// ScaleOut is what the instances of a scale-out gateway share about this
// one: its URL as the others reach it, sealed with the session keys into
// the IDs of its sessions (Options.SessionID) and the names of its held
// calls (Options.Instance). Set it as HTTPOptions.ScaleOut; each endpoint
// (Endpoint, Handler) routes with it on its own.
type ScaleOut struct {
	self string // this instance's URL (--advertise), as sealed in IDs
	keys *SessionKeyRing

	mu   sync.Mutex
	inst string // see Instance
	// setInstance give the gateways a new Instance (sealed with the keys
	// in force) after a rotation.
	setInstance []func(string)
}

// NewScaleOut returns the scale-out of the instance that other instances
// reach at self (an http or https URL), with the keys of ring. It takes
// over the ring's rotation: after one, the instance's name is sealed
// again.
func NewScaleOut(self string, ring *SessionKeyRing) *ScaleOut {
	s := &ScaleOut{self: strings.TrimRight(self, "/"), keys: ring}
	ring.rekeyed = s.rekeyed
	return s
}

// rekeyed seals this instance's name for held calls again with the keys
// now in force: once an old key is dropped, the other instances no longer
// open what it sealed.
func (s *ScaleOut) rekeyed() {
	s.mu.Lock()
	if s.inst == "" {
		s.mu.Unlock()
		return // not handed out yet
	}
	s.inst = strings.TrimPrefix(s.keys.Keys().Seal(s.self), SessionIDPrefix)
	inst, set := s.inst, slices.Clone(s.setInstance)
	s.mu.Unlock()
	for _, f := range set {
		f(inst)
	}
}

// bind makes g follow the instance's name through rotations.
func (s *ScaleOut) bind(g *Gateway) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setInstance = append(s.setInstance, g.SetInstance)
}

// SessionID returns the gateway's Options.SessionID: a new ID naming this
// instance; nil for a nil s (the SDK's random IDs).
func (s *ScaleOut) SessionID() func() string {
	if s == nil {
		return nil
	}
	return func() string { return s.keys.Seal(s.self) }
}

// scaleRouter routes one endpoint's requests of a scale-out gateway: a
// request of a session to the instance that holds it (here: stateful), an
// initialize to stateful (a new session here), anything else to stateless.
type scaleRouter struct {
	*ScaleOut
	stateful  http.Handler
	stateless http.Handler
	body      time.Duration
	log       *slog.Logger

	mu      sync.Mutex
	proxies map[string]*httputil.ReverseProxy
}

func (s *scaleRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	forwarded := r.Header.Get(hopHeader) != ""
	r.Header.Del(hopHeader)
	if sid := r.Header.Get(sessionIDHeader); sid != "" {
		owner, ok := s.keys.Open(sid)
		switch {
		case !ok:
			// Not one of ours (or sealed with a key since dropped): the
			// client starts a new session on a 404.
			http.Error(w, "session not found", http.StatusNotFound)
		case owner == s.self:
			s.stateful.ServeHTTP(w, r)
		case forwarded:
			s.log.Warn("a session's request was passed here, but its ID names another instance: check that each instance's --advertise is its own address",
				"self", s.self, "owner", owner)
			http.Error(w, "session not found", http.StatusNotFound)
		default:
			s.proxy(owner).ServeHTTP(w, r)
		}
		return
	}
	if r.Method == http.MethodPost {
		body, ok := readPostBody(w, r, s.body, s.log)
		if !ok {
			return
		}
		setPostBody(r, body)
		initialize, owner := s.route(r, body)
		switch {
		case initialize:
			s.stateful.ServeHTTP(w, r)
			return
		case owner != "" && owner != s.self && !forwarded:
			// The retry of a call held for an upstream server's question
			// (protocol 2026-07-28) goes to the instance that holds it.
			s.proxy(owner).ServeHTTP(w, r)
			return
		}
	}
	s.stateless.ServeHTTP(w, r)
}

// revisionRouter serves both protocol revisions on one endpoint of a
// gateway with sessions (serve --http without --stateless). A client
// before 2026-07-28 initializes a session and sends its ID with every
// request after; a client on 2026-07-28 has no sessions and sends each
// request on its own, which the SDK's stateful handler refuses (its
// transport speaks 2026-07-28 only statelessly). So a request of a
// session, an initialize and anything but a POST go to stateful, and any
// other POST to stateless — as the scale-out router does, without the
// passing on.
type revisionRouter struct {
	stateful, stateless http.Handler
	body                time.Duration
	log                 *slog.Logger
}

func (v *revisionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" {
		v.stateful.ServeHTTP(w, r)
		return
	}
	body, ok := readPostBody(w, r, v.body, v.log)
	if !ok {
		return
	}
	setPostBody(r, body)
	for _, m := range postMessages(r, body) {
		if m.Method == "initialize" {
			v.stateful.ServeHTTP(w, r)
			return
		}
	}
	v.stateless.ServeHTTP(w, r)
}

// Instance returns the gateway's Options.Instance: this instance's
// address, sealed, which HeldCallInstance finds in a held call's
// requestState; "" for a nil s.
func (s *ScaleOut) Instance() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inst == "" {
		s.inst = strings.TrimPrefix(s.keys.Keys().Seal(s.self), SessionIDPrefix)
	}
	return s.inst
}

// route reads a POST body without a session ID once: whether it holds an
// initialize, and the instance that holds the call a tools/call in it
// retries, if its requestState names one ("" if none).
func (s *scaleRouter) route(r *http.Request, body []byte) (initialize bool, owner string) {
	for _, m := range postMessages(r, body) {
		switch m.Method {
		case "initialize":
			return true, ""
		case "tools/call":
			if owner != "" {
				continue
			}
			var p struct {
				RequestState string `json:"requestState"`
			}
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			if inst, ok := HeldCallInstance(p.RequestState); ok {
				owner, _ = s.keys.Open(SessionIDPrefix + inst)
			}
		}
	}
	return false, owner
}

// maxProxies bounds the instances a scale-out gateway keeps a reverse
// proxy for.
const maxProxies = 64

// proxy returns the reverse proxy to the instance at owner.
func (s *scaleRouter) proxy(owner string) *httputil.ReverseProxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.proxies[owner]; p != nil {
		return p
	}
	target, err := url.Parse(owner)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") {
		// Sealed by an instance with the same keys: cannot happen unless
		// its --advertise was not a URL (which serve refuses).
		target = &url.URL{Scheme: "http", Host: "invalid."}
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The same endpoint there: instances serve one layout.
			pr.Out.URL.Path = pr.In.URL.Path
			pr.Out.URL.RawPath = pr.In.URL.RawPath
			pr.Out.Header.Set(hopHeader, "1")
		},
		// SSE: every event goes out as it comes.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client left
			}
			s.log.Warn("the instance that holds a session did not answer; the client is told to start a new session",
				"owner", owner, "error", err)
			http.Error(w, "session not found: the gateway instance that held it is gone", http.StatusNotFound)
		},
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if s.proxies == nil || len(s.proxies) >= maxProxies {
		// Instances come and go (a pod's address is new each time): start
		// over rather than keep every address ever seen.
		s.proxies = map[string]*httputil.ReverseProxy{}
	}
	s.proxies[owner] = p
	return p
}
