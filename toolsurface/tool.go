package toolsurface

// Tool is one tool as a model sees it, the shape the other parts of the
// surface hand to a provider (toolsurface/shape): the model-facing name
// (namespaced by ToolName or a Router), the server's description, and the
// server's input schema in any form NormalizeSchema accepts (a map,
// json.RawMessage, []byte, or a value that marshals to JSON).
type Tool struct {
	Name        string
	Description string
	InputSchema any
}
