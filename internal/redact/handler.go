package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler wraps h so that every record is redacted before h sees it: the
// message and string values are scrubbed as free text, a string attribute
// whose key names a secret becomes [Placeholder], and maps, slices,
// headers and errors are redacted as [Any] does. Numbers, booleans, times
// and durations pass unchanged.
func Handler(h slog.Handler) slog.Handler { return HandlerWith(h, nil) }

// HandlerWith is [Handler] that also scrubs the values of known (which
// may gain values later; nil: none).
func HandlerWith(h slog.Handler, known *Set) slog.Handler {
	if rh, ok := h.(*handler); ok && rh.known == known {
		return h // already redacting
	}
	return &handler{inner: h, known: known}
}

type handler struct {
	inner slog.Handler
	known *Set
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.known.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &handler{inner: h.inner.WithAttrs(red), known: h.known}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), known: h.known}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		group := v.Group()
		red := make([]slog.Attr, len(group))
		for i, g := range group {
			red[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindString:
		if IsSecretKey(a.Key) && v.String() != "" {
			return slog.String(a.Key, Placeholder)
		}
		return slog.String(a.Key, h.known.String(v.String()))
	case slog.KindAny:
		x := v.Any()
		if IsSecretKey(a.Key) && x != nil {
			return slog.String(a.Key, Placeholder)
		}
		switch x := x.(type) {
		case error:
			return slog.String(a.Key, h.known.String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.known.String(x.String()))
		}
		return slog.Any(a.Key, h.scrubDeep(Any(x)))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// scrubDeep applies the known values to the strings of a redacted value.
func (h *handler) scrubDeep(v any) any {
	if h.known == nil {
		return v
	}
	return EachString(v, h.known.String)
}

// EachString applies f to every string of v — v itself, or at any depth
// of its maps and slices (map[string]any, []any, []string,
// map[string]string, as [Args] and [Any] return them), and the keys of
// a map[string]any — and returns the
// result. Maps and slices are changed in place: give it a copy (what
// [Args] returns is one).
func EachString(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		var renamed map[string]any
		for k, e := range v {
			e = EachString(e, f)
			if nk := f(k); nk != k {
				// A key holds text too: a secret in it is
				// replaced as in a value.
				if renamed == nil {
					renamed = map[string]any{}
				}
				renamed[nk] = e
				delete(v, k)
				continue
			}
			v[k] = e
		}
		for k, e := range renamed {
			v[k] = e
		}
	case []any:
		for i, e := range v {
			v[i] = EachString(e, f)
		}
	case []string:
		for i, e := range v {
			v[i] = f(e)
		}
	case map[string]string:
		for k, e := range v {
			v[k] = f(e)
		}
	}
	return v
}
