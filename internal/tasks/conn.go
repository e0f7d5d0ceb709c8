package tasks

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Wrap returns a transport whose connection goes through a: for stdio and
// the legacy HTTP+SSE transport, whose connections the SDK uses only
// through the mcp.Connection interface. (Not for the SDK's Streamable HTTP
// client: see [Adapter.RoundTripper].) Closing the connection closes a.
func Wrap(t mcp.Transport, a *Adapter) mcp.Transport {
	return transport{inner: t, a: a}
}

type transport struct {
	inner mcp.Transport
	a     *Adapter
}

func (t transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		t.a.Close()
		return nil, err
	}
	return &conn{
		inner:    c,
		a:        t.a,
		injected: make(chan jsonrpc.Message, 64),
		closed:   make(chan struct{}),
	}, nil
}

// conn is a connection through the adapter.
//
// Its Read reads the inner connection in the caller's goroutine, as long
// as no task has been followed: then the adapter adds nothing but a look
// at each message. A follower delivers messages of its own (progress, the
// result) at any time, which a Read blocked on the inner connection would
// not see; so from the first task on, a pump goroutine reads the inner
// connection and Read takes from it and from the follower's messages.
type conn struct {
	inner    mcp.Connection
	a        *Adapter
	injected chan jsonrpc.Message

	wantPump atomic.Bool // set when a task starts
	pumping  bool        // Read's own: the pump runs
	pumped   chan pumpedMessage

	closeOnce sync.Once
	closed    chan struct{}
}

type pumpedMessage struct {
	msg jsonrpc.Message
	err error
}

func (c *conn) SessionID() string { return c.inner.SessionID() }

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if !c.pumping && c.wantPump.Load() {
			c.startPump()
		}
		var msg jsonrpc.Message
		if !c.pumping {
			m, err := c.inner.Read(ctx)
			if err != nil {
				return nil, err
			}
			msg = m
		} else {
			select {
			case m := <-c.injected:
				return m, nil
			default:
			}
			select {
			case m := <-c.injected:
				return m, nil
			case p := <-c.pumped:
				if p.err != nil {
					return nil, p.err
				}
				msg = p.msg
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-c.closed:
				return nil, errClosed
			}
		}
		if out := c.a.incoming(msg, c); out != nil {
			return out, nil
		}
	}
}

// startPump moves reading the inner connection to a goroutine of its own.
func (c *conn) startPump() {
	c.pumping = true
	c.pumped = make(chan pumpedMessage)
	go func() {
		for {
			msg, err := c.inner.Read(context.Background())
			select {
			case c.pumped <- pumpedMessage{msg, err}:
			case <-c.closed:
				return
			}
			if err != nil {
				return
			}
		}
	}()
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	out := c.a.outgoing(ctx, msg, c)
	if out == nil {
		return nil
	}
	err := c.inner.Write(ctx, out)
	if err != nil {
		c.a.sendFailed(out)
	}
	return err
}

func (c *conn) Close() error {
	c.a.Close()
	c.closeOnce.Do(func() { close(c.closed) })
	return c.inner.Close()
}

// The connection is its own link: one stream to the server and the SDK.

func (c *conn) send(ctx context.Context, req *jsonrpc.Request) error {
	return c.inner.Write(ctx, req)
}

func (c *conn) deliver(msg jsonrpc.Message) error {
	select {
	case c.injected <- msg:
		return nil
	case <-c.closed:
		return errClosed
	}
}

func (c *conn) started(*follower) { c.wantPump.Store(true) }

func (c *conn) done(*follower) {}
