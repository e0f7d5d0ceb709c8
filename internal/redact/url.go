package redact

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
)

// Mark stands for one expanded ${VAR} reference in the template that
// [URLExpansions] is given: the written URL with each reference replaced
// by Mark (config.Expand with a lookup that answers Mark for every name).
const Mark = "\x00"

// URLExpansions returns the text that ${VAR} expansion put into a URL,
// given template (see [Mark]) and the URL it expanded to, effective: what
// [String] must scrub wherever that URL, or a part of it, is quoted — a
// dial error from net/http quotes the whole request URL. A variable's
// name says nothing about its value (?k=${ACME} holds a key all the same),
// so every expanded value counts, except the scheme and the host[:port]:
// those are not secret (they travel in DNS and TLS in clear), and
// scrubbing them would hide which server an error is about. A value that
// spans host and path counts for its path part. When template does not
// describe effective (which expansion never produces) all of effective
// past its host counts.
func URLExpansions(template, effective string) []string {
	if !strings.Contains(template, Mark) || effective == "" {
		return nil
	}
	gaps := alignGaps(strings.Split(template, Mark), effective)
	if gaps == nil {
		gaps = [][2]int{{0, len(effective)}}
	}
	hostLo, hostHi := hostSpan(effective)
	var out []string
	add := func(lo, hi int) {
		if hi-lo < MinSecretLen {
			return
		}
		v := effective[lo:hi]
		out = append(out, v)
		// The same value decoded, as a handler or a log of parsed query
		// values would print it.
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	for _, g := range gaps {
		lo, hi := g[0], g[1]
		// Cut the public span [0, hostHi) minus the userinfo out of the gap.
		if lo < hostLo && hostLo > schemeEnd(effective) {
			add(max(lo, schemeEnd(effective)), min(hi, hostLo))
		}
		add(max(lo, hostHi), hi)
	}
	return out
}

// alignGaps matches effective against literal parts lits (the template
// split at each Mark) and returns the byte ranges of effective between
// them, or nil when effective does not fit. Adjacent marks make one gap.
func alignGaps(lits []string, effective string) [][2]int {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i, l := range lits {
		if i > 0 {
			b.WriteString(`(.*?)`)
		}
		b.WriteString(regexp.QuoteMeta(l))
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	m := re.FindStringSubmatchIndex(effective)
	if m == nil {
		return nil
	}
	var gaps [][2]int
	for i := 2; i+1 < len(m); i += 2 {
		if m[i] < 0 || m[i] == m[i+1] {
			continue
		}
		if n := len(gaps); n > 0 && gaps[n-1][1] == m[i] {
			gaps[n-1][1] = m[i+1]
			continue
		}
		gaps = append(gaps, [2]int{m[i], m[i+1]})
	}
	return gaps
}

var urlScheme = lazyre.New(`^[A-Za-z][A-Za-z0-9+.\-]*://`)

// schemeEnd is the offset just past "scheme://", or 0.
func schemeEnd(u string) int {
	if loc := urlScheme().FindStringIndex(u); loc != nil {
		return loc[1]
	}
	return 0
}

// hostSpan returns the byte range of u's host[:port]: after "scheme://"
// and any userinfo, up to the path, query or fragment. A u without
// "scheme://" has no host (lo == hi == 0).
func hostSpan(u string) (lo, hi int) {
	start := schemeEnd(u)
	if start == 0 {
		return 0, 0
	}
	end := len(u)
	if i := strings.IndexAny(u[start:], "/?#"); i >= 0 {
		end = start + i
	}
	lo = start
	if at := strings.LastIndexByte(u[start:end], '@'); at >= 0 {
		lo = start + at + 1
	}
	return lo, end
}

// URL returns a URL as it may be shown: [String]'s shapes (a userinfo
// password, secret-named query and fragment parameters), a userinfo that
// is a credential on its own (https://<token>@host), and the known values
// wherever they appear. A URL as written — with its ${VAR} references — is
// what to pass: the references name secrets without being ones.
func URL(u string, known ...string) string {
	return String(u, known...)
}
