package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sjson "github.com/segmentio/encoding/json"
)

// parseFlags are the SDK's: a key must match a field's name exactly, so
// "Method" or "METHOD" is not "method" (encoding/json would accept them,
// and a peer could smuggle a second value past a check).
const parseFlags = sjson.DontMatchCaseInsensitiveStructFields

// wire is the decoding form of a JSON-RPC message. Method is raw so that a
// present "method" key, even "" or null, makes a request.
type wire struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// parse decodes data into v, which must be all of data but spaces. data
// must not be reused by the caller: raw fields may point into it.
func parse(data []byte, v any) error {
	rest, err := sjson.Parse(data, v, parseFlags)
	if err != nil {
		return err
	}
	if rest = bytes.TrimLeft(rest, " \t\r\n"); len(rest) > 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return nil
}

// Decode decodes one JSON-RPC message as the SDK's [jsonrpc.DecodeMessage]
// does, without its per-call decoder buffers. Errors wrap ErrInvalidFrame.
// The message's raw fields may point into data.
func Decode(data []byte) (jsonrpc.Message, error) {
	if complete(data) == scanTooDeep {
		return nil, fmt.Errorf("%w: %v", ErrInvalidFrame, errTooDeep)
	}
	return decode(data)
}

func decode(data []byte) (jsonrpc.Message, error) {
	var w wire
	if err := parse(data, &w); err != nil {
		return nil, invalid(err)
	}
	if w.VersionTag != "2.0" {
		return nil, fmt.Errorf("%w: invalid message version tag %q; expected %q", ErrInvalidFrame, w.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidFrame, err)
	}
	if len(w.Method) > 0 {
		var method string
		if err := parse(w.Method, &method); err != nil {
			return nil, invalid(err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, fmt.Errorf("%w: a response without an id", ErrInvalidFrame)
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil { // not a typed nil in the error interface
		resp.Error = w.Error
	}
	return resp, nil
}

// decodeFrame decodes a line: one message, or a batch (a JSON array of
// messages).
func decodeFrame(data []byte) (msgs []jsonrpc.Message, isBatch bool, err error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var raws []json.RawMessage
		if err := parse(trimmed, &raws); err != nil {
			return nil, true, invalid(err)
		}
		if len(raws) == 0 {
			return nil, true, fmt.Errorf("%w: empty batch", ErrInvalidFrame)
		}
		msgs = make([]jsonrpc.Message, 0, len(raws))
		for _, raw := range raws {
			m, err := decode(raw)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, m)
		}
		return msgs, true, nil
	}
	m, err := decode(data)
	if err != nil {
		return nil, false, err
	}
	return []jsonrpc.Message{m}, false, nil
}

func invalid(err error) error {
	var syn *sjson.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("%w: %s", ErrInvalidFrame, syn.Error())
	}
	return fmt.Errorf("%w: %v", ErrInvalidFrame, err)
}

// The protocol watch: the connection learns the negotiated version from
// the initialize exchange it carries (the SDK tells its own connection
// through an unexported hook), because batches are refused from
// 2025-06-18 on. Until then, as in the SDK, they are accepted.

const (
	methodInitialize = "initialize"
	methodDiscover   = "server/discover"
	firstNoBatch     = "2025-06-18"
)

// watchRequest notes an initialize or discover call going either way.
func (c *conn) watchRequest(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() || (req.Method != methodInitialize && req.Method != methodDiscover) {
		return
	}
	c.mu.Lock()
	c.initID, c.initSet, c.initDiscover = req.ID, true, req.Method == methodDiscover
	c.mu.Unlock()
}

// watchRead notes an initialize call read, or the answer to ours.
func (c *conn) watchRead(msg jsonrpc.Message) {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		c.watchAnswerLocked(resp)
		c.mu.Unlock()
		return
	}
	c.watchRequest(msg)
}

// watchAnswerLocked settles the batching rule from the answer to the
// initialize or discover call.
func (c *conn) watchAnswerLocked(resp *jsonrpc.Response) {
	if !c.initSet || resp.ID != c.initID {
		return
	}
	c.initSet = false
	if resp.Error != nil {
		return
	}
	if c.initDiscover {
		c.noBatch = true // server/discover exists only in protocols without batches
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := parse(bytes.Clone(resp.Result), &res); err == nil {
		c.noBatch = res.ProtocolVersion >= firstNoBatch
	}
}
