package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Loopback is the people's path of the authorization code flow: a
// one-shot HTTP listener on 127.0.0.1 that receives the authorization
// server's redirect (RFC 8252 §7.3). Set Options.RedirectURL to
// RedirectURL and Options.Authorize to Authorize; Show opens the
// browser (or prints the URL).
type Loopback struct {
	// RedirectURL is http://127.0.0.1:<port>/callback.
	RedirectURL string

	show func(authURL string)
	ln   net.Listener
	srv  *http.Server
	got  chan *url.URL
	once sync.Once

	mu    sync.Mutex
	state string // the state of the authorization URL shown last
}

// NewLoopback listens on a free loopback port. show is given each
// authorization URL; it should open a browser and print the URL for people
// to open themselves. Close it when done.
func NewLoopback(show func(authURL string)) (*Loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the authorization callback: %v", err)
	}
	l := &Loopback{
		RedirectURL: fmt.Sprintf("http://%s/callback", ln.Addr()),
		show:        show,
		ln:          ln,
		got:         make(chan *url.URL, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		// Only the browser's redirect of the authorization shown last is
		// the answer: another local program (or a page that guessed the
		// port) sending first must not end the login with its code.
		if why := l.foreign(r); why != "" {
			http.Error(w, "This is not the answer to Switchboard's authorization request ("+why+"); it was ignored.", http.StatusBadRequest)
			return
		}
		u := *r.URL
		u.Scheme, u.Host = "http", ln.Addr().String()
		select {
		case l.got <- &u:
		default: // an answer is already waiting; a second one is ignored
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.URL.Query().Get("error") != "" {
			fmt.Fprintln(w, "Authorization was refused. You can close this window.")
			return
		}
		fmt.Fprintln(w, "Authorization received. You can close this window and return to the terminal.")
	})
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = l.srv.Serve(ln) }()
	return l, nil
}

// Authorize shows authURL and waits for the redirect back (or ctx).
func (l *Loopback) Authorize(ctx context.Context, _ string, authURL string) (*url.URL, error) {
	// Drop an answer left from an earlier, abandoned attempt.
	select {
	case <-l.got:
	default:
	}
	state := ""
	if u, err := url.Parse(authURL); err == nil {
		state = u.Query().Get("state")
	}
	l.mu.Lock()
	l.state = state
	l.mu.Unlock()
	if l.show != nil {
		l.show(authURL)
	}
	select {
	case u := <-l.got:
		return u, nil
	case <-ctx.Done():
		return nil, errors.New("no answer from the browser before the time ran out")
	}
}

// foreign says why r is not the redirect of the authorization shown last
// ("" when it is): not a GET to the listener's own address (a page of
// another name, through DNS rebinding), or not carrying that
// authorization's state (RFC 6749 §10.12). The flow checks the state again;
// this keeps a wrong answer from taking the one-answer slot.
func (l *Loopback) foreign(r *http.Request) string {
	if r.Method != http.MethodGet {
		return "not a GET"
	}
	if r.Host != l.ln.Addr().String() {
		return "another host name"
	}
	l.mu.Lock()
	want := l.state
	l.mu.Unlock()
	if want == "" {
		return "" // an authorization URL without a state: the flow judges
	}
	if subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("state")), []byte(want)) != 1 {
		return "another state"
	}
	return ""
}

// Close stops the listener.
func (l *Loopback) Close() error {
	var err error
	l.once.Do(func() { err = l.srv.Close() })
	return err
}
