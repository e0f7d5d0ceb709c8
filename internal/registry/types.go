package registry

import (
	"strings"
	"time"
)

// ServerList is a page of GET /v0.1/servers.
type ServerList struct {
	Servers  []ServerResponse `json:"servers"`
	Metadata ListMetadata     `json:"metadata"`
}

// ListMetadata is a page's pagination.
type ListMetadata struct {
	NextCursor string `json:"nextCursor,omitempty"`
	Count      int    `json:"count"`
}

// ServerResponse is one server version as the registry serves it: the
// publisher's server.json and the registry's own metadata.
type ServerResponse struct {
	Server ServerJSON   `json:"server"`
	Meta   ResponseMeta `json:"_meta"`
}

// ResponseMeta is the registry-managed part of a ServerResponse.
type ResponseMeta struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
}

// Official is the official registry's metadata about a server version.
type Official struct {
	Status      string    `json:"status"` // active, deprecated, deleted
	PublishedAt time.Time `json:"publishedAt"`
	UpdatedAt   time.Time `json:"updatedAt,omitempty"`
	IsLatest    bool      `json:"isLatest"`
}

// ServerJSON is a server.json: what a publisher says about one version of
// a server and how to run it.
type ServerJSON struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"` // reverse-DNS, e.g. io.github.user/weather
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where a server's source lives.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to run a server locally: a package of a package
// registry (npm, pypi, nuget, oci…) and how to start it.
type Package struct {
	RegistryType         string          `json:"registryType"`
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSHA256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            Transport       `json:"transport"`
	RuntimeArguments     []Argument      `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument      `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is how a client talks to a server: stdio, streamable-http or
// sse. In Remotes, URL may hold {variables} that Variables describe.
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValueInput  `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value a user may have to give.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	Format      string   `json:"format,omitempty"` // string, number, boolean, filepath
	Value       string   `json:"value,omitempty"`  // fixed; {name} refers to Variables
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
	// Variables are the {name} placeholders Value may hold.
	Variables map[string]Input `json:"variables,omitempty"`
}

// KeyValueInput is an environment variable or an HTTP header.
type KeyValueInput struct {
	Input
	Name string `json:"name"`
}

// Argument is one command-line argument: positional (its value) or named
// (Name, e.g. "--port", then its value, if any).
type Argument struct {
	Input
	Type       string `json:"type"` // positional or named
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// Transports lists how a server can be reached, for a listing: each
// package as "npm:stdio" and the like, each remote by its type.
func (s *ServerJSON) Transports() []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, p := range s.Packages {
		t := p.Transport.Type
		if t == "" {
			t = "stdio"
		}
		add(strings.ToLower(p.RegistryType) + ":" + t)
	}
	for _, r := range s.Remotes {
		add(r.Type)
	}
	return out
}
