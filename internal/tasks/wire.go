package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// What the two revisions put on the wire (serve.go holds the gateway's
// side of 2025-11-25). Everything else the package knows of
// the tasks wire format is in this file.
const (
	// extensionID names the 2026-07-28 tasks extension, in the server's
	// capabilities.extensions and in the client's per-request capabilities.
	extensionID = "io.modelcontextprotocol/tasks"
	// clientCapsKey is the _meta key of a 2026-07-28 request's client
	// capabilities.
	clientCapsKey = "io.modelcontextprotocol/clientCapabilities"
	// modern is the first protocol revision whose tasks are the extension.
	modern = "2026-07-28"

	methodGet    = "tasks/get"
	methodResult = "tasks/result" // 2025-11-25 only
	methodCancel = "tasks/cancel"
	methodUpdate = "tasks/update" // 2026-07-28 only

	notifyStatusV1 = "notifications/tasks/status"
	notifyStatusV2 = "notifications/tasks"
)

// revision is the tasks protocol a server speaks.
type revision uint8

const (
	revNone revision = iota
	// revV1 is 2025-11-25's experimental tasks utility: the client asks
	// for a task with a `task` field on tools/call, for tools whose
	// execution.taskSupport allows it, then polls tasks/get and fetches
	// the result with tasks/result.
	revV1
	// revV2 is the 2026-07-28 extension io.modelcontextprotocol/tasks: the
	// client declares the extension per request and the server decides
	// (resultType "task"); tasks/get carries the result, tasks/update the
	// answers to input requests.
	revV2
)

// Task statuses (both revisions).
const (
	statusWorking   = "working"
	statusInput     = "input_required"
	statusCompleted = "completed"
	statusFailed    = "failed"
	statusCancelled = "cancelled"
)

func terminal(status string) bool {
	return status == statusCompleted || status == statusFailed || status == statusCancelled
}

// Bounds on what a server may hand the adapter.
const (
	maxTaskID        = 512  // bytes of a task id
	maxStatusMessage = 1024 // bytes of a status message passed on as progress
	minPoll          = 10 * time.Millisecond
	defaultPoll      = time.Second
	maxPoll          = time.Minute
)

// task is a task's state as a CreateTaskResult, a tasks/get result or a
// status notification of either revision carries it.
type task struct {
	ID      string
	Status  string
	Message string
	// TTL is how long after its creation the server keeps the task; 0:
	// no limit given.
	TTL time.Duration
	// Poll is the server's polling interval, bounded; 0: none given.
	Poll time.Duration
	// Revision 2 only: the outcome of a terminal task and the requests of
	// one waiting for input.
	Result        json.RawMessage
	Error         json.RawMessage
	InputRequests map[string]json.RawMessage
}

// wireTask is task's JSON, both revisions' spellings.
type wireTask struct {
	TaskID         *string                    `json:"taskId"`
	Status         *string                    `json:"status"`
	StatusMessage  *string                    `json:"statusMessage"`
	TTL            json.RawMessage            `json:"ttl"`
	TTLMs          json.RawMessage            `json:"ttlMs"`
	PollInterval   json.RawMessage            `json:"pollInterval"`
	PollIntervalMs json.RawMessage            `json:"pollIntervalMs"`
	Result         json.RawMessage            `json:"result"`
	Error          json.RawMessage            `json:"error"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
}

// errGarbage is wrapped by every error about a task message that is not
// what the specification says.
var errGarbage = errors.New("not a task")

// parseTask reads a task from data: a tasks/get result, a status
// notification's params or a CreateTaskResult's task.
func parseTask(data json.RawMessage) (*task, error) {
	var w wireTask
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", errGarbage, shortErr(err))
	}
	if w.TaskID == nil || *w.TaskID == "" {
		return nil, fmt.Errorf("%w: no taskId", errGarbage)
	}
	if len(*w.TaskID) > maxTaskID || !utf8.ValidString(*w.TaskID) {
		return nil, fmt.Errorf("%w: a taskId of %d bytes", errGarbage, len(*w.TaskID))
	}
	t := &task{ID: *w.TaskID}
	if w.Status == nil {
		return nil, fmt.Errorf("%w: no status", errGarbage)
	}
	switch s := *w.Status; s {
	case statusWorking, statusInput, statusCompleted, statusFailed, statusCancelled:
		t.Status = s
	default:
		return nil, fmt.Errorf("%w: unknown status %s", errGarbage, quoteShort(s))
	}
	if w.StatusMessage != nil {
		t.Message = *w.StatusMessage
	}
	var err error
	if t.TTL, err = millis(first(w.TTLMs, w.TTL), "ttl"); err != nil {
		return nil, err
	}
	if t.Poll, err = millis(first(w.PollIntervalMs, w.PollInterval), "pollInterval"); err != nil {
		return nil, err
	}
	if t.Poll > 0 {
		t.Poll = min(max(t.Poll, minPoll), maxPoll)
	}
	t.Result, t.Error, t.InputRequests = w.Result, w.Error, w.InputRequests
	return t, nil
}

func first(a, b json.RawMessage) json.RawMessage {
	if len(a) > 0 {
		return a
	}
	return b
}

// millis reads a duration in milliseconds; absent or null is 0.
func millis(raw json.RawMessage, field string) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil || ms < 0 || math.IsNaN(ms) {
		return 0, fmt.Errorf("%w: %s is not a number of milliseconds", errGarbage, field)
	}
	if ms > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, nil // longer than anything: no limit
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// created reads a tools/call result: the task it created, or nil when the
// server answered with an ordinary result.
func created(rev revision, result json.RawMessage) (*task, error) {
	if !bytes.Contains(result, []byte(`"task"`)) {
		return nil, nil // the cheap test first: most results are not tasks
	}
	switch rev {
	case revV1:
		var r struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(result, &r) != nil || len(r.Task) == 0 || r.Task[0] != '{' {
			return nil, nil
		}
		return parseTask(r.Task)
	case revV2:
		var r struct {
			ResultType string `json:"resultType"`
		}
		if json.Unmarshal(result, &r) != nil || r.ResultType != "task" {
			return nil, nil
		}
		return parseTask(result)
	}
	return nil, nil
}

// serverSupport reads an initialize or server/discover result: which
// revision of tasks the server offers for tools/call, and whether it
// takes tasks/cancel.
func serverSupport(result json.RawMessage, discover bool) (rev revision, cancel bool) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Tasks *struct {
				Cancel   json.RawMessage `json:"cancel"`
				Requests *struct {
					Tools *struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil {
		return revNone, false
	}
	caps := r.Capabilities
	if discover || r.ProtocolVersion >= modern {
		if ext, ok := caps.Extensions[extensionID]; ok && isObject(ext) {
			return revV2, true
		}
		return revNone, false
	}
	if t := caps.Tasks; t != nil && t.Requests != nil && t.Requests.Tools != nil && isObject(t.Requests.Tools.Call) {
		return revV1, isObject(t.Cancel)
	}
	return revNone, false
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// taskSupports reads a tools/list result: each tool's
// execution.taskSupport (2025-11-25), "" for a tool that has none.
func taskSupports(result json.RawMessage) map[string]string {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	out := make(map[string]string, len(r.Tools))
	for _, t := range r.Tools {
		s := ""
		if t.Execution != nil {
			s = t.Execution.TaskSupport
		}
		out[t.Name] = s
	}
	return out
}

// callParams is what the adapter reads of a tools/call request.
type callParams struct {
	Name string `json:"name"`
	Meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

// withTaskField adds 2025-11-25's task field to tools/call params,
// asking for ttl when it is set.
func withTaskField(params json.RawMessage, ttl time.Duration) (json.RawMessage, error) {
	m, err := object(params)
	if err != nil {
		return nil, err
	}
	field := map[string]any{}
	if ttl > 0 {
		field["ttl"] = ttl.Milliseconds()
	}
	b, _ := json.Marshal(field)
	m["task"] = b
	return json.Marshal(m)
}

// withExtension declares the 2026-07-28 tasks extension in a request's
// per-request client capabilities (_meta), beside what the SDK put there.
func withExtension(params json.RawMessage) (json.RawMessage, error) {
	m, err := object(params)
	if err != nil {
		return nil, err
	}
	meta, err := object(m["_meta"])
	if err != nil {
		return nil, err
	}
	caps, err := object(meta[clientCapsKey])
	if err != nil {
		return nil, err
	}
	exts, err := object(caps["extensions"])
	if err != nil {
		return nil, err
	}
	if _, ok := exts[extensionID]; ok {
		return params, nil
	}
	exts[extensionID] = json.RawMessage(`{}`)
	if caps["extensions"], err = json.Marshal(exts); err != nil {
		return nil, err
	}
	if meta[clientCapsKey], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	if m["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// object decodes a JSON object, absent or null as an empty one.
func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

type taskIDParams struct {
	TaskID string          `json:"taskId"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

type updateParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Meta           json.RawMessage            `json:"_meta,omitempty"`
}

// requestMeta is the part of a 2026-07-28 request's _meta that every
// request carries (protocol version, client info and capabilities, the
// extension declared): the adapter's own requests carry the call's.
func requestMeta(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	keep := map[string]json.RawMessage{}
	for _, k := range []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo", clientCapsKey} {
		if v, ok := p.Meta[k]; ok {
			keep[k] = v
		}
	}
	if len(keep) == 0 {
		return nil
	}
	b, _ := json.Marshal(keep)
	return b
}

// inputRequest is one of a 2026-07-28 task's inputRequests: a request the
// server would have sent the client, which the adapter hands the SDK.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// progressParams is the notifications/progress the adapter makes of a
// task's status messages.
type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Message       string          `json:"message,omitempty"`
}

// cancelledParams is what the adapter reads of notifications/cancelled.
type cancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

// rpcError reads a JSON-RPC error object (a failed task's error).
func rpcError(raw json.RawMessage) *jsonrpc.Error {
	var e jsonrpc.Error
	if json.Unmarshal(raw, &e) != nil || (e.Code == 0 && e.Message == "") {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task failed without saying why"}
	}
	return &e
}

// idKey is a JSON-RPC id as a map key: the SDK's ids are int64, the
// adapter's own are strings, and a requestId read from JSON is a number
// or a string.
func idKey(id jsonrpc.ID) any { return id.Raw() }

// rawIDKey reads a JSON id (as notifications/cancelled names one) as an
// idKey.
func rawIDKey(raw json.RawMessage) (any, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return nil, false
	}
	return idKey(id), true
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func quoteShort(s string) string {
	if len(s) > 40 {
		s = cut(s, 40)
	}
	return strconv.QuoteToASCII(s)
}
