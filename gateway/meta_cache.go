package gateway

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaCache remembers fastMeta's reading of the _meta texts of 2026-07-28
// calls. A client sends the same _meta (protocol version, its info, its
// capabilities) with every call, and decoding it was ~7 µs of each. Each
// call still gets maps of its own (a deep copy: nothing a handler writes
// into its _meta reaches another call), so a hit is exactly a fresh
// decode (TestMetaCacheSameAsDecode). It holds at most metaCacheMax texts
// and starts over when full.
type metaCache struct {
	mu sync.Mutex
	m  map[string]metaRead
	// values are the object and array values of _meta members, by their
	// text, decoded (decodeMeta).
	values map[string]any
}

type metaRead struct {
	meta mcp.Meta
	ok   bool
}

// progressTokenKey is the key of a progress token, as a _meta text holds it.
var progressTokenKey = []byte(`"progressToken"`)

const (
	metaCacheMax     = 64
	metaCacheMaxText = 4 << 10 // longer texts are decoded each time
)

// read is fastMeta(raw), from the cache when raw was read before.
func (c *metaCache) read(raw json.RawMessage) (mcp.Meta, bool) {
	if len(raw) > metaCacheMaxText {
		return fastMeta(raw)
	}
	if bytes.Contains(raw, progressTokenKey) {
		// A progress token is new with every call (and Claude Code's
		// call ID with it): the text is read member by member, the
		// client's capabilities and info from the cache.
		if meta, handled := c.decodeMeta(raw); handled {
			return checkFastMeta(meta)
		}
		return fastMeta(raw)
	}
	c.mu.Lock()
	r, hit := c.m[string(raw)]
	c.mu.Unlock()
	if !hit {
		meta, ok := fastMeta(raw)
		r = metaRead{meta: meta, ok: ok}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= metaCacheMax {
			c.m = make(map[string]metaRead)
		}
		c.m[string(raw)] = metaRead{meta: copyMeta(meta), ok: ok}
		c.mu.Unlock()
		return r.meta, r.ok
	}
	return copyMeta(r.meta), r.ok
}

// readOlder is olderMeta(raw), read by decodeMeta where it can (VS Code
// sends a fresh progress token and request ID with every call).
func (c *metaCache) readOlder(raw json.RawMessage) (mcp.Meta, bool) {
	if meta, handled := c.decodeMeta(raw); handled {
		return checkOlderMeta(meta)
	}
	return olderMeta(raw)
}

// copyMeta is a deep copy of a decoded _meta: maps, slices and the JSON
// scalars encoding/json makes.
func copyMeta(m mcp.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		out[k] = copyJSON(v)
	}
	return out
}

func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v // string, float64, bool, nil: values
}
