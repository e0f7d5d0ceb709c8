package host

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Questions the host declines without putting them to anyone
// (docs/security.md, A server's question). The MCP specification says a
// server must not ask for sensitive information — passwords, API keys,
// access tokens, payment credentials — through a form (that is what
// URL-mode elicitation is for), and that a URL-mode question's address is
// shown to the user to judge; a server that asks anyway is phishing, and
// whoever answers (a person at a terminal, a gateway's client) would hand
// the secret to the server. So the host declines, before any Prompter sees
// it:
//
//   - a form with a field that asks for a secret (its format, or a word of
//     its name or title: password, token, API key, card number, …);
//   - a form larger than a person can read (more than maxQuestionFields
//     fields, or more than maxQuestionBytes of JSON);
//   - a URL-mode question whose address is not https (http on loopback
//     aside), or that holds a user name (https://github.com@evil.example),
//     which shows one host and opens another;
//   - a question asked while no call to the server is running (none the
//     person made: nobody asked the server anything).

// maxQuestionFields and maxQuestionBytes bound a form: a question is read
// by a person (or passed on to a gateway's client), and thousands of
// fields or megabytes of defaults serve nobody.
const (
	maxQuestionFields = 64
	maxQuestionBytes  = 64 << 10
)

// maxLabelRunes bounds the field label a refusal quotes.
const maxLabelRunes = 80

// QuestionRefusalNoter is implemented by a Prompter that wants to be told
// of the questions the host declined without asking it (the terminal says
// so); why names the server's offence in Switchboard's words.
type QuestionRefusalNoter interface {
	QuestionRefused(ctx context.Context, server string, why string)
}

// refuseQuestion says why the host declines p without asking anyone; ""
// when it may be asked. inCall is whether a call to the server is
// running.
func refuseQuestion(p *mcp.ElicitParams, inCall bool) string {
	if !inCall {
		return "it asked while no call to it was running"
	}
	if p == nil {
		return ""
	}
	if p.Mode == "url" || (p.URL != "" && p.RequestedSchema == nil) {
		return refuseQuestionURL(p.URL)
	}
	if len(p.Message) > maxQuestionBytes {
		return fmt.Sprintf("its message is longer than %d KiB", maxQuestionBytes>>10)
	}
	if p.RequestedSchema == nil {
		return ""
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return "its form cannot be read"
	}
	if len(raw) > maxQuestionBytes {
		return fmt.Sprintf("its form is larger than %d KiB", maxQuestionBytes>>10)
	}
	var top struct {
		Properties map[string]struct {
			Title  string `json:"title"`
			Format string `json:"format"`
			Enum   []any  `json:"enum"`
			OneOf  []any  `json:"oneOf"`
			Type   any    `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return "its form is not an object of fields"
	}
	if len(top.Properties) > maxQuestionFields {
		return fmt.Sprintf("its form has %d fields (at most %d are shown)", len(top.Properties), maxQuestionFields)
	}
	for name, f := range top.Properties {
		if len(f.Enum) > 0 || len(f.OneOf) > 0 || f.Type == "boolean" {
			continue // a choice: nothing secret can be typed into it
		}
		if what := secretAsked(name, f.Title, f.Format); what != "" {
			label := f.Title
			if label == "" {
				label = name
			}
			if r := []rune(label); len(r) > maxLabelRunes {
				label = string(r[:maxLabelRunes]) + "…"
			}
			return fmt.Sprintf("its form asks for %s (field %q), which MCP forbids a server to ask for in a form", what, label)
		}
	}
	return ""
}

// refuseQuestionURL says why a URL-mode question's address is refused.
func refuseQuestionURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !u.IsAbs() {
		return "its address is not an absolute URL"
	}
	if u.User != nil {
		return fmt.Sprintf("its address holds a user name before the host (%s): it shows one host and opens another", u.Hostname())
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return ""
	case "http":
		h := u.Hostname()
		if a, err := netip.ParseAddr(h); h == "localhost" || err == nil && a.Unmap().IsLoopback() {
			return ""
		}
		return "its address is http://, not https://: what is typed there can be read and changed on the way"
	}
	return fmt.Sprintf("its address is a %s: URL, not https://", u.Scheme)
}

// secretAsked names the secret a field of that name, title and format
// asks for; "" when it does not look like one. Words, not substrings: a
// "keyboard layout" or an "author" is not a secret.
func secretAsked(name, title, format string) string {
	switch strings.ToLower(format) {
	case "password", "secret", "token", "api-key", "apikey", "credit-card", "card-number":
		return "a secret"
	}
	for _, s := range []string{name, title} {
		words := fieldWords(s)
		for i, w := range words {
			next := ""
			if i+1 < len(words) {
				next = words[i+1]
			}
			switch w {
			case "password", "passwd", "pwd", "passphrase", "passcode", "pin":
				return "a password"
			case "token", "apikey", "secret", "credential", "credentials", "privatekey", "otp", "totp", "2fa", "mfa", "pat":
				return "a token or credential"
			case "cvv", "cvc", "iban", "ssn", "cardnumber":
				return "payment or identity details"
			}
			switch w + " " + next {
			case "api key", "access key", "private key", "secret key", "signing key", "one time", "recovery code",
				"card number", "credit card", "debit card", "security code", "social security", "account number", "routing number":
				return "a secret"
			}
		}
	}
	return ""
}

// fieldWords splits a field's name or title into lower-case words at
// anything that is not a letter or digit and at camelCase humps
// ("githubToken", "API_KEY", "One-time code").
func fieldWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}
