package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// follower follows one task to its end for the SDK.
type follower struct {
	a     *Adapter
	l     link
	call  *pendingCall
	rev   revision
	t     *task     // the latest state
	since time.Time // when the task was created, by this clock

	stop     chan struct{} // closed when the SDK gives the call up
	stopOnce sync.Once
	finished chan struct{} // closed when the follower is done
	notices  chan *task

	shown    string  // the last status passed on as progress
	progress float64 // the progress count passed on
	asked    map[string]bool
}

// halt says the SDK gave the call up: the task is cancelled.
func (f *follower) halt() { f.stopOnce.Do(func() { close(f.stop) }) }

func (f *follower) halted() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

func (f *follower) run() {
	defer close(f.finished)
	defer f.l.done(f)
	defer f.a.forget(f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-f.stop:
		case <-f.a.closed:
		case <-ctx.Done():
		}
		cancel()
	}()
	out, err := f.follow(ctx)
	switch {
	case f.halted():
		f.a.cancelTask(f.l, f.t.ID, f.call.meta)
		return
	case errors.Is(err, errClosed) || isClosed(f.a.closed):
		return // the SDK fails the call with the connection
	case err != nil:
		if !terminal(f.t.Status) {
			// Given up (its ttl passed, or the server's answers made no
			// sense): no one will collect it, so it stops there too.
			f.a.cancelTask(f.l, f.t.ID, f.call.meta)
		}
		out = &jsonrpc.Response{ID: f.call.id, Error: taskError(f.t.ID, err)}
	}
	if err := f.l.deliver(out); err != nil {
		f.a.log.Debug("task result not delivered", "task", f.t.ID, "error", err)
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// taskError is the JSON-RPC error the SDK gets for a task the adapter
// could not follow to its end.
func taskError(id string, err error) *jsonrpc.Error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %s: %v", shownID(id), err)}
}

// shownID is a task id as a message shows it: a server chooses it, so
// anything but a plain token is quoted (and cut).
func shownID(id string) string {
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return quoteShort(id)
		}
	}
	return cut(id, 80)
}

var errExpired = errors.New("expired")

// follow polls the task until it ends and returns the response the SDK
// gets for the call.
func (f *follower) follow(ctx context.Context) (*jsonrpc.Response, error) {
	t := f.t
	var result chan callResult // 2025-11-25: a tasks/result in flight
	for {
		f.t = t
		f.show(t)
		if terminal(t.Status) {
			return f.outcome(ctx, t, result)
		}
		if t.Status == statusInput {
			switch f.rev {
			case revV1:
				// The server sends its requests on tasks/result's stream;
				// the answer is the task's result once it ends.
				if result == nil {
					result = make(chan callResult, 1)
					params := f.idParams() // f.t is this loop's to change
					go func() {
						r, err := f.a.call(ctx, f.l, methodResult, params)
						result <- callResult{r, err}
					}()
				}
			case revV2:
				if err := f.answerInput(ctx, t); err != nil {
					return nil, err
				}
			}
		}
		poll := t.Poll
		if poll <= 0 {
			poll = defaultPoll
		}
		if t.TTL > 0 {
			left := time.Until(f.since.Add(t.TTL))
			if left <= 0 {
				return nil, f.expired(t)
			}
			poll = min(poll, left)
		}
		wait := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil, ctx.Err()
		case r := <-result:
			wait.Stop()
			return f.final(r)
		case n := <-f.notices:
			wait.Stop()
			t = n
			continue
		case <-wait.C:
		}
		if t.TTL > 0 && !time.Now().Before(f.since.Add(t.TTL)) {
			return nil, f.expired(t)
		}
		n, err := f.get(ctx)
		if err != nil {
			return nil, err
		}
		t = n
	}
}

// idParams are the params of the adapter's requests about the task.
func (f *follower) idParams() taskIDParams {
	return taskIDParams{TaskID: f.t.ID, Meta: f.call.meta}
}

type callResult struct {
	r   *jsonrpc.Response
	err error
}

func (f *follower) expired(t *task) error {
	return fmt.Errorf("%w: its ttl of %s passed while it was still %s; it was cancelled", errExpired, t.TTL, t.Status)
}

// get asks the server for the task's state.
func (f *follower) get(ctx context.Context) (*task, error) {
	resp, err := f.a.call(ctx, f.l, methodGet, f.idParams())
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		e := rpcErrorOf(resp.Error)
		if e.Code == jsonrpc.CodeInvalidParams {
			return nil, fmt.Errorf("the server no longer knows the task (expired or lost): %s", e.Message)
		}
		return nil, fmt.Errorf("tasks/get failed: %s", e.Message)
	}
	t, err := parseTask(resp.Result)
	if err != nil {
		return nil, fmt.Errorf("the server answered tasks/get with something that is %v", err)
	}
	if t.ID != f.t.ID {
		return nil, fmt.Errorf("the server answered tasks/get with another task (%s)", quoteShort(t.ID))
	}
	return t, nil
}

func rpcErrorOf(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// outcome is the response for a task that ended.
func (f *follower) outcome(ctx context.Context, t *task, result chan callResult) (*jsonrpc.Response, error) {
	if t.Status == statusCancelled {
		msg := "it was cancelled by the server"
		if t.Message != "" {
			msg += ": " + oneLine(t.Message)
		}
		return nil, errors.New(msg)
	}
	switch f.rev {
	case revV1:
		if result == nil {
			r, err := f.a.call(ctx, f.l, methodResult, f.idParams())
			return f.final(callResult{r, err})
		}
		select {
		case r := <-result:
			return f.final(r)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	default:
		if len(t.Result) == 0 && len(t.Error) == 0 {
			// A CreateTaskResult (or a status notification) that says the
			// task ended need not carry its outcome; tasks/get does.
			n, err := f.get(ctx)
			if err != nil {
				return nil, err
			}
			if n.Status == t.Status {
				t = n
			}
		}
		if t.Status == statusFailed {
			return &jsonrpc.Response{ID: f.call.id, Error: rpcError(t.Error)}, nil
		}
		if !isObject(t.Result) {
			return nil, fmt.Errorf("the server says the task completed but gave no result")
		}
		return &jsonrpc.Response{ID: f.call.id, Result: t.Result}, nil
	}
}

// final makes tasks/result's answer (2025-11-25) the call's response.
func (f *follower) final(r callResult) (*jsonrpc.Response, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.r.Error != nil {
		return &jsonrpc.Response{ID: f.call.id, Error: r.r.Error}, nil
	}
	if !isObject(r.r.Result) {
		return nil, fmt.Errorf("the server answered tasks/result with something that is not a result")
	}
	return &jsonrpc.Response{ID: f.call.id, Result: r.r.Result}, nil
}

// show passes a changed status on as progress, when the call asked for
// progress.
func (f *follower) show(t *task) {
	if len(f.call.token) == 0 {
		return
	}
	text := t.Message
	if text == "" && t.Status == statusInput {
		text = "waiting for input"
	}
	text = cut(oneLine(text), maxStatusMessage)
	if text == "" || text == f.shown {
		return
	}
	f.shown = text
	f.progress++
	params, _ := json.Marshal(progressParams{ProgressToken: f.call.token, Progress: f.progress, Message: text})
	if err := f.l.deliver(&jsonrpc.Request{Method: "notifications/progress", Params: params}); err != nil {
		f.a.log.Debug("task progress not delivered", "task", t.ID, "error", err)
	}
}

// answerInput answers the input requests of a 2026-07-28 task: each new
// one goes to the SDK as the server's request, and the answers go back in
// one tasks/update.
func (f *follower) answerInput(ctx context.Context, t *task) error {
	keys := make([]string, 0, len(t.InputRequests))
	for k := range t.InputRequests {
		if !f.asked[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	answers := map[string]json.RawMessage{}
	for _, k := range keys {
		f.asked[k] = true
		var req inputRequest
		if err := json.Unmarshal(t.InputRequests[k], &req); err != nil || req.Method == "" {
			return fmt.Errorf("the server asked for input (%s) in a form that is not a request", quoteShort(k))
		}
		resp, err := f.a.ask(ctx, f.l, req.Method, req.Params)
		if err != nil {
			return err
		}
		switch {
		case resp.Error == nil:
			answers[k] = resp.Result
		case req.Method == "elicitation/create":
			answers[k] = json.RawMessage(`{"action":"cancel"}`)
		default:
			return fmt.Errorf("the task needs input Switchboard cannot give (%s: %s)", quoteShort(req.Method), rpcErrorOf(resp.Error).Message)
		}
	}
	resp, err := f.a.call(ctx, f.l, methodUpdate, updateParams{TaskID: t.ID, InputResponses: answers, Meta: f.call.meta})
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("tasks/update failed: %s", rpcErrorOf(resp.Error).Message)
	}
	return nil
}

// oneLine folds a server's text onto one line.
func oneLine(s string) string {
	b := make([]rune, 0, len(s))
	space := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' {
			r = ' '
		}
		if r == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b = append(b, r)
	}
	return string(b)
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
