// Package config reads Switchboard's MCP server configuration
// (docs/configuration.md) and
// resolves it into the one view the runtime uses: which servers exist for
// a workspace, from which scope, with what trust, and whether each is
// available, disabled, missing or invalid, and why.
//
// # How the pieces fit
//
// [Load] is the entry point. It finds the files with [DefaultHome],
// [FindRoot], [UserFile], [ProjectFile], [WorkspaceFile] and
// [ManagedFile]; reads each one (JSONC: comments and trailing commas are
// fine); parses every "mcpServers" object with the same parser that
// [ParseServers] and [ParseServer] expose; and resolves:
//
//   - Scopes. For one name the definition that wins is, highest first:
//     managed (nothing overrides an administrator), session (handed in by
//     an embedder), flag (--mcp-config; later flags win), local (the user
//     file's "projects"[<workspace>], matched by [MatchProjectKeys] however
//     the directory is spelled), project (<root>/.mcp.json or
//     <root>/mcp.json), user (~/.switchboard/mcp.json or the legacy
//     ~/.switchboard.json). Within a scope only the first existing file is
//     read. Lower definitions are listed in [ResolvedServer.Shadows]. With
//     StrictMCPConfig only flag, session and managed servers are read.
//   - Availability, decided in this order: a definition with an error is
//     [Invalid]; the managed deny list, then the managed allow list (which
//     managed servers need not be on) make it [Disabled] with reason
//     "managed policy"; the workspace layer (<root>/.switchboard/workspace.json)
//     disables, or enables over the two next rules; a definition's
//     "enabled": false and any file's "disabledMcpServers" disable. A name
//     the workspace enables that nothing defines is [Missing]: it has no
//     Scope or Trust, and its File and Pos point at the workspace file.
//   - Trust is [TrustFor] the winning scope.
//   - Expansion: [Expand] runs over command, each args item, env values,
//     url and header values (never keys) to make
//     [ResolvedServer.Effective]; [ResolvedServer.Written] keeps the text
//     launch trust fingerprints. Unset variables make one warning per
//     server, "Missing environment variables: A, B". [Expand] gives the
//     exact rules ("$${X}" is a literal "${X}", defaults nest, "${lower}"
//     is left as written).
//
// Every problem is a [Diagnostic] with file:line:col (columns count
// characters) and a one-line fix, both in [Resolved.Diagnostics] and, for
// a server's own problems, in [ResolvedServer.Diagnostics]. One broken file
// or server never hides the valid servers of other files. A long-running
// host that reloads gives every Load the same [LastGood], so that a file
// broken mid-edit keeps its last good contents in effect until it is fixed.
//
// [LoadSettings] reads a --settings value (inline JSON or a file).
//
// The package is pure: it reads files and the environment it is given,
// and never starts a process, opens a socket or reads the clock. Writing
// configuration (preserving comments) is in edit.go; there alone the
// package waits, for another process's edit of the same file to finish
// (a lock held from the read to the rename, see internal/filelock).
package config
