// Package policy decides whether one MCP tool call may run:
// allow, ask a person, or deny.
//
// # How the pieces fit
//
// A [Rule] is one string from a "permissions" list ("allow", "ask" or
// "deny") of a settings file, with the [Source] it came from. [ParseRule]
// reads its text into a [Pattern]:
//
//   - mcp__server is mcp__server__*: every tool of that server;
//   - mcp__server__tool names one tool;
//   - mcp__* is every MCP tool — in deny and ask only; in allow it has no
//     effect, so that no single rule can wave every server through;
//   - * may replace only a whole last segment: mcp__git* and
//     mcp__github__get_* match nothing (no error; [Policy.Problems] says
//     so), and a bare * has no effect on MCP tools;
//   - matching is case-insensitive, and - and . count as _;
//   - a rule names a (server, tool) pair, never a joined string: the
//     server segment ends at the first "__" (mcp__a__b__c is tool b__c of
//     server a). A server whose folded name holds "__" or ends in "_", or
//     that folds to the same name as another, is refused by the host
//     ([ServerConflicts]), so no rule can mean two servers' tools;
//   - an argument rule constrains named string arguments with globs, e.g.
//     mcp__fs__write_file(path:"/tmp/**"): * stays within one path segment,
//     ** crosses /; every pair must match, and a rule whose argument is
//     absent (or not a string) does not match. A malformed rule matches
//     nothing and is reported.
//
// A [Policy] holds the rules of every source. [Policy.Decide] takes a
// [Request] (data in) and returns a [Decision] (data out): deny beats ask
// beats allow, and no matching rule means ask. Rules from the project's own
// settings (<root>/.switchboard/settings.json, written by the repository)
// may only tighten: their deny and ask rules apply, their allow rules are
// ignored. Tool annotations come from the server and are untrusted: a
// declared destructiveHint keeps a broad grant (mcp__server,
// mcp__server__*) from allowing the tool, so it is asked for, while an
// allow rule that names the tool exactly (mcp__server__tool, with or
// without argument conditions) still allows it — the user named that tool
// (docs/security.md, Annotations); readOnlyHint grants nothing. Autopilot (an agent mode that skips questions for the
// agent's own tools) changes nothing here: MCP tools are still asked for
// unless a rule allows them.
//
// What to do with an ask — put the question to a person, or refuse when
// nobody can answer — is the caller's business (the host does it).
// [ExactRule] is the rule a person's "always" answer writes, and
// [CheckRule] says why a rule a command was asked to write would not take
// effect.
//
// [Load] is the one function that does I/O: it reads the settings files of
// every scope (user, local, managed, project) and takes the parsed
// --settings value. A file that cannot be read or parsed turns every allow
// rule off (fail closed) and is reported in [Policy.Problems].
package policy
