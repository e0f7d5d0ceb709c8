package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

func init() {
	registerCommand(func(f *Factory) *cobra.Command { return NewResourcesCmd(f, nil) })
	registerCommand(func(f *Factory) *cobra.Command { return NewReadCmd(f, nil) })
}

// ResourcesOptions are the inputs of `switchboard resources`.
type ResourcesOptions struct {
	runtimeOptions
	Server string
	JSON   bool
}

// NewResourcesCmd returns `switchboard resources`.
func NewResourcesCmd(f *Factory, runF func(context.Context, *ResourcesOptions) error) *cobra.Command {
	opts := &ResourcesOptions{}
	cmd := &cobra.Command{
		Use:   "resources",
		Short: "List the servers' resources and resource templates as @server:uri references",
		Long: `Start the configured servers, wait at most --wait for them, and list the resources
of every connected server as the references they are read by (@<server>:<uri>).
Read one with 'switchboard read'.

Resource templates follow the resources, marked (template): a URI template such
as @notes:notes://{id} stands for every URI built from it, so fill in the
variables and read that (switchboard read @notes:notes://42).

Piped, the first line is the header (RESOURCE TYPE DESCRIPTION, tab-separated),
then one tab-separated row per resource or template: its @server:uri reference,
its MIME type ("-" when it has none), its title or description. Skip the
header with tail -n +2, or use --json.

With --json, an array of {kind, ref, server, uri, name, title, description,
mimeType}: kind is "resource" or "template" (whose uri is the URI template).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.runtimeOptions = newRuntimeOptions(f)
			opts.JSON = f.global().JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return resourcesRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Server, "server", "", "list only the resources of server `NAME`")
	return cmd
}

type resourceJSON struct {
	Kind        string `json:"kind"` // "resource" or "template"
	Ref         string `json:"ref"`  // @server:uri
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	MIMEType    string `json:"mimeType"`
}

// resourceRef is how a resource is referenced: @<server>:<uri>.
func resourceRef(server, uri string) string { return toolsurface.ResourceRef(server, uri) }

func resourcesRun(ctx context.Context, opts *ResourcesOptions) (err error) {
	s, lctx, cancel, err := startListing(ctx, &opts.runtimeOptions, opts.Server)
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()
	defer cancel()
	resources, warnings, lerr := s.h.Resources(lctx)
	if lerr != nil && ctx.Err() != nil {
		return lerr
	}
	templates, twarnings, lerr := s.h.ResourceTemplates(lctx)
	if lerr != nil && ctx.Err() != nil {
		return lerr
	}
	// Both lists warn about the same servers still connecting.
	warnings = append(warnings, twarnings...)
	slices.Sort(warnings)
	s.warn(slices.Compact(warnings))
	rows := make([]resourceJSON, 0, len(resources)+len(templates))
	for _, r := range resources {
		rows = append(rows, resourceJSON{Kind: "resource", Ref: resourceRef(r.Server, r.Resource.URI), Server: r.Server, URI: r.Resource.URI,
			Name: r.Resource.Name, Title: r.Resource.Title, Description: r.Resource.Description, MIMEType: r.Resource.MIMEType})
	}
	for _, rt := range templates {
		t := rt.Template
		rows = append(rows, resourceJSON{Kind: "template", Ref: resourceRef(rt.Server, t.URITemplate), Server: rt.Server, URI: t.URITemplate,
			Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType})
	}
	if opts.JSON {
		if err := printJSON(opts.IO.Out, rows); err != nil {
			return err
		}
	} else {
		t := newTablePrinter(opts.IO, "resource", "type", "description")
		for _, r := range rows {
			desc := r.Title
			if desc == "" {
				desc = descFirstLine(r.Description)
			}
			if desc == "" {
				desc = r.Name
			}
			if r.Kind == "template" {
				desc = "(template) " + desc
			}
			if opts.IO.IsTTY {
				desc = truncRunes(termsafe.Line(desc), 70) // escaped, then cut
			}
			t.AddRow(r.Ref, dashEmpty(r.MIMEType), desc)
		}
		if err := t.Render(); err != nil {
			return err
		}
		if len(rows) == 0 && noServerReadable(s.cfg) {
			fmt.Fprintln(opts.IO.ErrOut, unreadableMessage)
		} else if len(rows) == 0 {
			fmt.Fprintln(opts.IO.ErrOut, "No resources: no connected server offers any.")
		}
	}
	if opts.Server != "" {
		return serverNotReady(s, opts.Server)
	}
	return nil
}

// ReadOptions are the inputs of `switchboard read`.
type ReadOptions struct {
	runtimeOptions
	Server, URI string
	JSON        bool
	// bareURI: the argument had no @ and its URI part starts with "//",
	// as a URI given without its server does ("demo://readme").
	bareURI bool
}

// NewReadCmd returns `switchboard read @server:uri`.
func NewReadCmd(f *Factory, runF func(context.Context, *ReadOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:               "read @SERVER:URI",
		ValidArgsFunction: completeResourceRefs(f),
		Short:             "Read one resource of a server",
		Long: `Read a resource (resources/read) and print its contents. Piped, text and binary
contents are written as they are; on a terminal, text is shown with anything the
terminal would act on (escape sequences, control and bidi characters) escaped, and
binary contents as a one-line summary. With --json, print the server's result.`,
		Example: `  switchboard read @demo:demo://readme`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return Usagef("e.g. switchboard read @demo:demo://readme", "read takes one @server:uri, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			server, uri, err := parseResourceRef(args[0])
			if err != nil {
				return err
			}
			opts := &ReadOptions{runtimeOptions: newRuntimeOptions(f), Server: server, URI: uri, JSON: f.global().JSON,
				bareURI: !strings.HasPrefix(strings.TrimSpace(args[0]), "@") && strings.HasPrefix(uri, "//")}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return readRun(cmd.Context(), opts)
		},
	}
}

// parseResourceRef splits "@server:uri" (the @ is optional). Server names
// cannot hold ':', so the first one ends the name.
func parseResourceRef(s string) (server, uri string, err error) {
	server, uri, err = toolsurface.ParseResourceRef(s)
	if err != nil {
		return "", "", UsageErr(err, "name a resource as @server:uri; `switchboard resources` lists them")
	}
	return server, uri, nil
}

func readRun(ctx context.Context, opts *ReadOptions) (err error) {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	if cfg.Server(opts.Server) == nil {
		if opts.bareURI {
			// "demo://readme" read as server "demo": a URI given alone.
			uri := opts.Server + ":" + opts.URI
			return UsageErr(fmt.Errorf("%s is a resource's URI, and there is no server named %q: name the server that offers it", uri, opts.Server),
				fmt.Sprintf("switchboard read @SERVER:%s (`switchboard resources` lists each resource as @SERVER:URI)", uri))
		}
		return unknownServer(opts.IO.ErrOut, cfg, opts.Server)
	}
	s, err := startSessionWith(ctx, &opts.runtimeOptions, cfg, serverOnly(opts.Server))
	if err != nil {
		return err
	}
	defer func() { err = s.close(err) }()
	s.wait(ctx, -1)
	if err := serverNotReady(s, opts.Server); err != nil {
		return err
	}
	res, rerr := s.h.ReadResource(ctx, opts.Server, opts.URI)
	if rerr != nil {
		if errors.Is(rerr, host.ErrNotConnected) {
			return FailureErr(rerr, "run `switchboard status` to see why")
		}
		return FailureErr(fmt.Errorf("reading %s: %w", resourceRef(opts.Server, opts.URI), rerr),
			fmt.Sprintf("`switchboard resources --server %s` lists what it offers", opts.Server))
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, res)
	}
	for _, c := range res.Contents {
		switch {
		case c.Text != "" || c.Blob == nil:
			text := c.Text
			if opts.IO.IsTTY {
				// On a terminal the server's text must not act on it;
				// piped, it is data and passes unchanged, like a blob.
				text = termsafe.Text(text)
			}
			fmt.Fprint(opts.IO.Out, text)
			if c.Text != "" && !strings.HasSuffix(c.Text, "\n") && opts.IO.IsTTY {
				fmt.Fprintln(opts.IO.Out)
			}
		case opts.IO.IsTTY:
			fmt.Fprintf(opts.IO.Out, "[%s: %s, %d bytes; pipe the output to save it]\n", termsafe.Line(c.URI), termsafe.Line(dashEmpty(c.MIMEType)), len(c.Blob))
		default:
			if _, err := opts.IO.Out.Write(c.Blob); err != nil {
				return err
			}
		}
	}
	return nil
}
