// Package switchboard is the front door for an agent that embeds
// Switchboard: the MCP servers a person configured, behind the same safety
// the switchboard CLI and gateway apply, in a few lines.
//
//	sb, err := switchboard.Open(ctx, switchboard.Options{Workspace: root, Prompter: p, Logger: l})
//	if err != nil { … }
//	defer sb.Close()
//	tools, _ := sb.Tools(ctx, shape.Anthropic) // hand these to the model
//	res, err := sb.Call(ctx, "mcp__github__search_issues", args)
//	// res.Text goes back to the model
//	go sb.Watch(ctx) // follow edits of the configuration and settings
//
// What Open does, in order:
//
//   - loads the configuration of every scope (managed, user, local,
//     project, and the files the run names; see package config), and
//     reads the settings of every layer once ([ReadSettings]): managed,
//     the run's own, local, user and project, each labelled;
//   - decides what may start ([LaunchTrust]): a server the person wrote
//     starts; a project server — one a repository wrote — starts only once
//     the person approved that exact definition or their own settings
//     approve it in advance. A repository's own files never count, and a
//     settings file inside the repository may only tighten
//     ([CheckSettingsFile]). The [Prompter] is asked about each pending
//     server before anything starts; a headless run holds them;
//   - compiles the permission rules (package policy): deny wins, an ask
//     goes to the Prompter, and headless an ask is a deny naming the rule
//     that would allow the call;
//   - starts every server that may start, in the background, each in the
//     sandbox its scope's defaults give it (package host).
//
// [Switchboard.Tools] lists the connected servers' tools, waiting a little
// for those still connecting; [Switchboard.ListTools] adds a warning for
// each server whose tools are not in the list yet.
// [Switchboard.Call] applies the rules, wraps the result as untrusted data
// and bounds its size (package toolsurface); a tool that runs as an MCP
// task is followed to its end, its status messages reported as progress.
// [Switchboard.Start] begins a call and returns while it runs, for an
// agent that goes back to its model and collects the result later
// ([BackgroundCall]: status, wait, cancel). [Switchboard.Reload] and
// [Switchboard.Watch] apply edits of the configuration and settings in one
// step, and [Switchboard.Subscribe] tells whoever follows the servers
// (package gateway serves them to other MCP clients: gateway.New(sb, opts)).
//
// Several agents share one set of servers: [Options.Profile] opens a
// profile of the settings (only its servers start), [Switchboard.View] is
// a sub-agent's Switchboard narrowed to a profile over the same running
// processes, and [Switchboard.OpenSession] adds the servers a host hands
// in at run time (the Agent Client Protocol's session/new mcpServers),
// trusted as the embedder says, stopped when the session closes.
//
// The CLI is built on this package: what it adds is presentation (flags,
// prompts, tables, exit codes). docs/configuration.md and docs/security.md
// describe the files and the trust model.
//
// # Who calls whom
//
// The CLI, the gateway and an embedding agent are the front door's
// callers, and every tool call of theirs takes one path,
// [Switchboard.CallWith] ([Switchboard.Call] is its short form;
// [Switchboard.Start] runs a call in the background under the same
// rules); the front door never imports them:
//
//	internal/cli            your agent         package gateway: New(sb, opts),
//	(flags, prompts,            │              sb.Subscribe; stdio, or HTTP via
//	 tables, exit codes)        │              (*Gateway).Handler: auth, Origin,
//	        │                   │              sessions, scale-out
//	        └───────────────────┼───────────────────┘
//	                            ▼
//	   switchboard: Open, Tools, CallWith, Reload, Watch, Subscribe
//	     reads config, decides launch trust (trust), compiles the rules (policy)
//	                            ▼
//	   host: starts, supervises and calls servers; host.PolicyPermit,
//	   the one permission engine, decides each call
//	     ├─ internal/proc   processes, their supervisor and sandbox
//	     ├─ policy          the rules: deny > ask > allow
//	     ├─ trust           a repository server's filtered environment, tool pins
//	     └─ toolsurface     names, the untrusted-data envelope, output limits
//
// The pure packages (config, policy, trust's decisions, toolsurface) start
// no process and dial nothing; internal/archtest enforces the arrows.
package switchboard
