package testserver

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The templates server offers resource templates (resources/templates/list):
// resources a server does not list one by one but builds from a URI
// template, such as test://notes/{id}.
func init() {
	register("templates", serverDef{
		doc: "resource templates: test://notes/{id} reads as 'note <id> from <tag>'; completion of id; " +
			"tools echo, add, add_template and remove_template (test://<name>/{id}, sending resources/list_changed)",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			tag := fs.String("tag", "templates", "the name every read reports, to tell two instances apart")
			noList := fs.Bool("no-template-list", false, "answer resources/templates/list with method not found, as servers without templates may")
			p.build = func() *mcp.Server { return newTemplatesServer(*tag, *noList) }
			return p.buildAndServe
		},
	})
}

// NotesTemplate is the URI template the templates server always offers.
const NotesTemplate = "test://notes/{id}"

// noteIDs are what completion offers for {id} of NotesTemplate.
var noteIDs = []string{"1", "2", "3", "10", "12"}

type templateNameIn struct {
	Name string `json:"name" jsonschema:"the scheme-local name: the template is test://<name>/{id}"`
}

// templateNameRE is compiled on first use: its counted repetition is costly
// and every process of the switchboard binary links this package.
var templateNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`) })

func newTemplatesServer(tag string, noList bool) *mcp.Server {
	s := mcp.NewServer(implementation("templates"), &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true},
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			out := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
			p := req.Params
			if p.Ref == nil || p.Ref.Type != "ref/resource" || p.Ref.URI != NotesTemplate || p.Argument.Name != "id" {
				return out, nil
			}
			for _, id := range noteIDs {
				if strings.HasPrefix(id, p.Argument.Value) {
					out.Completion.Values = append(out.Completion.Values, id)
				}
			}
			out.Completion.Total = len(out.Completion.Values)
			return out, nil
		},
	})
	if noList {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "resources/templates/list" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
				}
				return next(ctx, method, req)
			}
		})
	}
	addBasicTools(s)
	addTemplate(s, "notes", "note", tag)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add_template",
		Description: "Adds the resource template test://<name>/{id} at runtime; the server then sends notifications/resources/list_changed.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in templateNameIn) (*mcp.CallToolResult, any, error) {
		if !templateNameRE().MatchString(in.Name) {
			return errorResult("name must match " + templateNameRE().String()), nil, nil
		}
		addTemplate(s, in.Name, in.Name, tag)
		return text("added template test://" + in.Name + "/{id}"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "remove_template",
		Description: "Removes the resource template test://<name>/{id}; the server then sends notifications/resources/list_changed.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in templateNameIn) (*mcp.CallToolResult, any, error) {
		s.RemoveResourceTemplates("test://" + in.Name + "/{id}")
		return text("removed template test://" + in.Name + "/{id}"), nil, nil
	})
	return s
}

// addTemplate adds test://<scheme>/{id}, whose resources read as
// "<noun> <id> from <tag>".
func addTemplate(s *mcp.Server, name, noun, tag string) {
	prefix := "test://" + name + "/"
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: prefix + "{id}",
		Name:        noun,
		Title:       fmt.Sprintf("A %s by id", noun),
		Description: fmt.Sprintf("The %s with the given id; any id but an empty one exists.", noun),
		MIMEType:    "text/plain",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		id := strings.TrimPrefix(uri, prefix)
		if id == "" || id == uri || strings.Contains(id, "/") {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("%s %s from %s", noun, id, tag),
		}}}, nil
	})
}
