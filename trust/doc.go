// Package trust decides which MCP servers may start (launch trust;
// docs/security.md, Launch trust). A server is arbitrary code run with the user's rights, and a
// repository's .mcp.json is written by whoever wrote the repository, so
// project-scope (repo-authored) servers never start until the user
// approves exactly what would run.
//
// # How the pieces fit
//
//   - [Fingerprint] is the SHA-256 of [Encode], a structural, unambiguous
//     encoding of a definition as written (before ${VAR} expansion): type,
//     command, args, sorted env pairs, cwd, url, sorted header pairs,
//     headersHelper and env_passthrough. Changing any of them changes the
//     fingerprint.
//   - [Store] keeps approvals in <home>/trust.json (0600), per workspace and
//     server name: the fingerprint, when, and a summary that lets a stale
//     approval say which fields changed. A workspace is filed under
//     [WorkspaceKey], its path with symlinks resolved, so one directory is
//     one workspace whichever path reaches it. A corrupt or foreign-writable
//     store fails closed: nothing is approved. Foreign-writable includes,
//     on Unix, a file another user owns and a directory others can write
//     (without the sticky bit).
//   - [Store.Check] gives a [Verdict]: Trusted (not repo-authored),
//     Approved, NeedsApproval, or Stale with the changed fields.
//     [PreApproval] holds what the user's own settings approve in advance
//     (enableAllProjectMcpServers, enabledMcpjsonServers) or reject
//     (disabledMcpjsonServers); [Decide] combines both. The host maps a
//     verdict to its needs-approval / approval-stale states with
//     [Verdict.Reason].
//   - [Environ] filters the parent environment of a repo-authored server to
//     [BaseEnv] plus what its definition names ([Named]);
//     [PassedVariables] lists those names for the approval prompt, and
//     [Danger] explains env keys that change how programs load code.
//   - [PinStore] keeps, beside the approvals, the tool definitions a
//     model was shown, per workspace and server (<home>/tool-pins.json):
//     a digest per tool ([DefinitionDigest]) and each definition once, so
//     that a changed tool can be held and shown word by word (docs/security.md,
//     What the model reads). It is written and read like the approvals
//     (lock, re-read, atomic replace) and fails closed the same way.
//   - [Quote] and [CommandLine] render the literal command line for the
//     prompt, escaping anything a terminal would act on or hide.
//
// The package is pure apart from the store's file and resolving workspace
// paths: it never spawns,
// dials or reads the clock, and it does not import the host.
package trust
