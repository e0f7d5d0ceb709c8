// Package search ranks a list of tools for a short query written by a
// model: the engine behind the tool_search built-in
// (toolsurface.ToolSearchName), which lets a model find, among hundreds of
// deferred tools, the few it needs without paying for all their
// definitions in its context.
//
// Build one Index per tool list and query it as often as needed:
//
//	docs := make([]search.Doc, 0, len(tools))
//	for _, t := range tools { // t.Tool is the server's *mcp.Tool
//		docs = append(docs, search.DocFor(t.Name, t.Server, t.Tool))
//	}
//	ix := search.NewIndex(docs) // immutable, safe for concurrent use
//	hits := ix.Search("open a github ticket", search.DefaultLimit)
//
// DocFor reads what a model would see of a tool: its title, its
// description capped by toolsurface.CapDescription, and the argument names
// and descriptions of its schema after toolsurface.NormalizeSchema. A Doc
// can also be written by hand.
//
// Index.Search scores words with BM25F over the tool's name (weighted
// most), its server's name and argument names, its description and its
// arguments' descriptions (weighted least). Words are split like tool
// names (Tokenize) and lightly stemmed (Stem); a few synonyms (new/create,
// ticket/issue) count a little, and an unknown word is completed to the
// terms that start with it. A query that is a tool's exact name ranks that
// tool first, +word requires a word in the tool's or server's name, and
// "select:NAME,…" (SelectPrefix) returns the named tools as they are.
//
// The package is pure: it never spawns, dials or sleeps, and results are
// deterministic (ties are broken by name).
package search
