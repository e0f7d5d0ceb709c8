package search

import (
	"math"
	"math/bits"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// DefaultLimit is how many hits Search returns when asked for none.
const DefaultLimit = 5

// MaxLimit caps how many hits one search returns.
const MaxLimit = 50

// SelectPrefix starts a query that names tools instead of describing them:
// "select:mcp__github__create_issue,mcp__jira__get_issue".
const SelectPrefix = "select:"

// Arg is one argument of a tool, as the index sees it.
type Arg struct {
	Name, Description string
}

// Doc is one tool as the search index sees it.
type Doc struct {
	// Name is the model-facing name (mcp__<server>__<tool>); it identifies
	// the tool in hits and must be unique in one index.
	Name string
	// Server and Tool are the server's name and its own name for the tool.
	Server, Tool string
	Title        string
	Description  string
	Args         []Arg
}

// DocFor builds the Doc of a server's tool: its title,
// description (capped as a model would see it) and the names and
// descriptions of the top-level properties of its normalized input schema,
// sorted by name.
func DocFor(name, server string, t *mcp.Tool) Doc {
	d := Doc{Name: name, Server: server}
	if t == nil {
		return d
	}
	d.Tool, d.Title = t.Name, t.Title
	d.Description = toolsurface.CapDescription(t.Description, toolsurface.DefaultDescriptionCap)
	props, _ := toolsurface.NormalizeSchema(t.InputSchema)["properties"].(map[string]any)
	for k, v := range props {
		a := Arg{Name: k}
		if m, ok := v.(map[string]any); ok {
			if s, ok := m["description"].(string); ok {
				a.Description = toolsurface.CapDescription(s, 512)
			}
		}
		d.Args = append(d.Args, a)
	}
	sort.Slice(d.Args, func(i, j int) bool { return d.Args[i].Name < d.Args[j].Name })
	return d
}

// Hit is one search result: a tool's Name and how well it matched.
type Hit struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// Fields of a document and their BM25F weight and length normalization:
// a word in the tool's name says far more than one in its description.
const (
	fName = iota
	fServer
	fArgName
	fDesc
	fArgDesc
	nFields
)

var (
	fieldWeight = [nFields]float64{3.0, 1.5, 1.5, 1.0, 0.4}
	fieldB      = [nFields]float64{0.3, 0, 0.5, 0.75, 0.75}
)

const (
	bm25K1 = 1.2
	// synonymWeight and prefixWeight scale terms the query did not spell
	// out: a synonym (new → create) or a completion of an unknown word
	// (kube → kubernetes).
	synonymWeight = 0.3
	prefixWeight  = 0.5
	// exactBonus lifts a tool whose name is the whole query above every
	// word match.
	exactBonus = 1000
	// nameCoverage is added in full to a tool whose name (or server name)
	// holds every word of the query, or a synonym of it; in part for some.
	nameCoverage = 2.0
)

type posting struct {
	doc    int32
	score  float32 // the term's BM25F contribution to this document
	inName bool    // the term is in the tool's name or server name
}

// Index ranks tools for a query with BM25F over their names, server
// names, argument names and descriptions (see Search). Build it once with
// NewIndex; it is immutable afterwards and safe for concurrent use.
type Index struct {
	docs    []Doc
	byName  map[string]int   // exact Name → doc
	byLower map[string][]int // lower-cased Name and Tool → docs
	terms   map[string]int32 // stemmed term → id
	vocab   []string         // the terms, sorted, for prefix completion
	post    [][]posting      // by term id, in doc order
	pool    sync.Pool        // *scratch
}

type scratch struct {
	score   []float64
	req     []uint64 // required words found in the name, one bit each
	words   []uint64 // query words found in the name, one bit each
	touched []int32
}

// NewIndex indexes docs. A doc whose Name repeats an earlier one is
// ignored: names identify hits.
func NewIndex(docs []Doc) *Index {
	ix := &Index{byName: map[string]int{}, byLower: map[string][]int{}, terms: map[string]int32{}}
	for _, d := range docs {
		if _, dup := ix.byName[d.Name]; dup {
			continue
		}
		ix.byName[d.Name] = len(ix.docs)
		ix.docs = append(ix.docs, d)
	}
	type fieldTF [nFields]float64
	perDoc := make([]map[string]*fieldTF, len(ix.docs))
	var lens [][nFields]float64
	var sum [nFields]float64
	add := func(m map[string]*fieldTF, f int, text string, n *float64) {
		forEachToken(text, func(tok string) {
			st := Stem(tok)
			tf := m[st]
			if tf == nil {
				tf = &fieldTF{}
				m[st] = tf
			}
			tf[f]++
			*n++
		})
	}
	df := map[string]int{}
	for i, d := range ix.docs {
		l := strings.ToLower(d.Name)
		ix.byLower[l] = append(ix.byLower[l], i)
		if t := strings.ToLower(d.Tool); t != "" && t != l {
			ix.byLower[t] = append(ix.byLower[t], i)
		}
		m := map[string]*fieldTF{}
		var n [nFields]float64
		add(m, fName, d.Tool, &n[fName])
		add(m, fName, d.Title, &n[fName])
		if d.Tool == "" { // a doc without its own tool name: use the model-facing one
			add(m, fName, d.Name, &n[fName])
		}
		add(m, fServer, d.Server, &n[fServer])
		add(m, fDesc, d.Description, &n[fDesc])
		for _, a := range d.Args {
			add(m, fArgName, a.Name, &n[fArgName])
			add(m, fArgDesc, a.Description, &n[fArgDesc])
		}
		perDoc[i] = m
		lens = append(lens, n)
		for f := range n {
			sum[f] += n[f]
		}
		for t := range m {
			df[t]++
		}
	}
	var avg [nFields]float64
	for f := range avg {
		avg[f] = 1
		if len(ix.docs) > 0 && sum[f] > 0 {
			avg[f] = sum[f] / float64(len(ix.docs))
		}
	}
	for t := range df {
		ix.vocab = append(ix.vocab, t)
	}
	sort.Strings(ix.vocab)
	ix.post = make([][]posting, len(ix.vocab))
	for id, t := range ix.vocab {
		ix.terms[t] = int32(id)
		ix.post[id] = make([]posting, 0, df[t])
	}
	n := float64(len(ix.docs))
	for i, m := range perDoc {
		for t, tf := range m {
			var w float64
			for f := 0; f < nFields; f++ {
				if tf[f] == 0 {
					continue
				}
				norm := 1 - fieldB[f] + fieldB[f]*lens[i][f]/avg[f]
				w += fieldWeight[f] * tf[f] / norm
			}
			d := float64(df[t])
			idf := math.Log(1 + (n-d+0.5)/(d+0.5))
			id := ix.terms[t]
			ix.post[id] = append(ix.post[id], posting{
				doc:    int32(i),
				score:  float32(idf * w / (bm25K1 + w)),
				inName: tf[fName] > 0 || tf[fServer] > 0,
			})
		}
	}
	for _, p := range ix.post {
		sort.Slice(p, func(a, b int) bool { return p[a].doc < p[b].doc })
	}
	ix.pool.New = func() any {
		n := len(ix.docs)
		return &scratch{score: make([]float64, n), req: make([]uint64, n), words: make([]uint64, n)}
	}
	return ix
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// Doc returns the indexed document of a tool by its Name.
func (ix *Index) Doc(name string) (Doc, bool) {
	i, ok := ix.byName[name]
	if !ok {
		return Doc{}, false
	}
	return ix.docs[i], true
}

type queryTerm struct {
	id       int32
	weight   float64
	required int // bit index +1 when the term is required (+word), else 0
	word     int // which query word (0-63) the term stands for, -1 for none
}

// Search returns at most limit tools for query, best first; if limit <= 0,
// DefaultLimit, and never more than MaxLimit. Ties are broken
// by name, so the result is deterministic.
//
// The query is read as words: split like tool names (snake_case, camelCase,
// kebab-case, digits), lower-cased and stemmed, so "create github issue"
// finds mcp__github__create_issue and "read file" finds read_file. Each
// word scores by BM25F over the tool's name and title (weighted most), its
// server's name and its argument names, its description, and its
// arguments' descriptions (weighted least). Words the query does not spell
// but mean nearly the same (new/create, ticket/issue) count a little, and
// a word no tool contains is completed to the words that start with it.
//
// Three forms are special:
//   - A query that is exactly one tool's name (mcp__github__create_issue,
//     or the server's own name for it, in any case) puts that tool first.
//   - A word written +word must appear in the tool's name or its server's
//     name: "+slack send" ranks Slack's tools by "send" and drops the rest.
//   - "select:NAME[,NAME…]" returns exactly the named tools that exist, in
//     the order given, each with score 1, ignoring limit (a name may be the
//     model-facing name or, if no tool has that, the server's own name).
func (ix *Index) Search(query string, limit int) []Hit {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	q := strings.TrimSpace(query)
	if len(q) >= len(SelectPrefix) && strings.EqualFold(q[:len(SelectPrefix)], SelectPrefix) {
		return ix.selectNames(q[len(SelectPrefix):])
	}
	if len(ix.docs) == 0 || q == "" {
		return nil
	}
	terms, nreq, nwords := ix.parseQuery(q)
	sc := ix.pool.Get().(*scratch)
	defer ix.pool.Put(sc)
	touch := func(d int32) {
		if sc.score[d] == 0 && sc.req[d] == 0 {
			sc.touched = append(sc.touched, d)
		}
	}
	for _, t := range terms {
		for _, p := range ix.post[t.id] {
			touch(p.doc)
			sc.score[p.doc] += t.weight * float64(p.score)
			if p.inName {
				if t.required > 0 {
					sc.req[p.doc] |= 1 << (t.required - 1)
				}
				if t.word >= 0 {
					sc.words[p.doc] |= 1 << t.word
				}
			}
		}
	}
	for _, d := range ix.byLower[strings.ToLower(q)] {
		touch(int32(d))
		sc.score[d] += exactBonus
	}
	want := uint64(1)<<nreq - 1
	top := make([]Hit, 0, limit+1)
	for _, d := range sc.touched {
		s := sc.score[d]
		ok := sc.req[d]&want == want && s > 0
		if nwords > 0 {
			// A tool whose name holds every idea of the query beats one
			// that only mentions them in its description.
			s += nameCoverage * float64(bits.OnesCount64(sc.words[d])) / float64(nwords)
		}
		sc.score[d], sc.req[d], sc.words[d] = 0, 0, 0
		if !ok {
			continue
		}
		h := Hit{Name: ix.docs[d].Name, Score: s}
		if len(top) == limit && !better(h, top[limit-1]) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return better(h, top[i]) })
		top = append(top, Hit{})
		copy(top[i+1:], top[i:])
		top[i] = h
		if len(top) > limit {
			top = top[:limit]
		}
	}
	sc.touched = sc.touched[:0]
	if len(top) == 0 {
		return nil
	}
	return top
}

func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Name < b.Name
}

// parseQuery turns a query into weighted index terms, in a fixed order so
// that scores add up identically on every run. It returns how many
// required (+word) terms and how many words (after stop words) there are.
func (ix *Index) parseQuery(q string) ([]queryTerm, int, int) {
	var out []queryTerm
	seen := map[int32]int{} // term id → index in out
	addTerm := func(id int32, w float64, req, word int) {
		if i, ok := seen[id]; ok {
			out[i].weight = max(out[i].weight, w)
			if req > 0 && out[i].required == 0 {
				out[i].required = req
			}
			if out[i].word < 0 || w == 1 {
				out[i].word = word
			}
			return
		}
		seen[id] = len(out)
		out = append(out, queryTerm{id: id, weight: w, required: req, word: word})
	}
	type pending struct {
		stem string
		word int
	}
	nreq, nwords := 0, 0
	unknownRequired := false
	prevTok := ""
	var joined []int32
	var expand []pending // stems to add synonyms and completions for, after the words
	for _, field := range strings.Fields(q) {
		required := strings.HasPrefix(field, "+") && len(field) > 1
		if required {
			field = field[1:]
		}
		forEachToken(field, func(tok string) {
			// Two words a tool may spell as one (on call → oncall).
			if prevTok != "" {
				if id, ok := ix.terms[Stem(prevTok+tok)]; ok {
					joined = append(joined, id)
				}
			}
			prevTok = tok
			if stopWords[tok] && !required {
				return
			}
			st := Stem(tok)
			word := -1
			if nwords < 64 {
				word = nwords
				nwords++
			}
			req := 0
			if required && nreq < 63 {
				nreq++
				req = nreq
			}
			id, ok := ix.terms[st]
			if !ok {
				if req > 0 {
					unknownRequired = true // nothing can match
				}
				expand = append(expand, pending{st, word})
				return
			}
			addTerm(id, 1, req, word)
			expand = append(expand, pending{st, word})
		})
	}
	if unknownRequired {
		return nil, 0, 0
	}
	for _, id := range joined {
		addTerm(id, 1, 0, -1)
	}
	for _, p := range expand {
		if _, known := ix.terms[p.stem]; !known {
			for _, id := range ix.completions(p.stem) {
				addTerm(id, prefixWeight, 0, p.word)
			}
			continue
		}
		for _, syn := range synonyms()[p.stem] {
			if id, ok := ix.terms[syn]; ok {
				addTerm(id, synonymWeight, 0, p.word)
			}
		}
	}
	return out, nreq, nwords
}

// stopWords are left out of queries: they say nothing about which tool.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "for": true,
	"on": true, "with": true, "and": true, "or": true, "is": true, "it": true, "by": true,
	"from": true, "this": true, "that": true, "be": true, "as": true, "at": true, "what": true,
	"how": true, "i": true, "me": true, "my": true, "some": true, "into": true, "all": true,
	"tool": true, "tools": true, "please": true, "can": true, "do": true, "you": true,
}

// completions returns up to 8 indexed terms that start with prefix (at
// least 3 letters), in sorted order.
func (ix *Index) completions(prefix string) []int32 {
	if len(prefix) < 3 {
		return nil
	}
	var ids []int32
	for i := sort.SearchStrings(ix.vocab, prefix); i < len(ix.vocab) && len(ids) < 8; i++ {
		if !strings.HasPrefix(ix.vocab[i], prefix) {
			break
		}
		ids = append(ids, int32(i))
	}
	return ids
}

// selectNames resolves "a,b,c" to the tools of those names.
func (ix *Index) selectNames(list string) []Hit {
	var out []Hit
	seen := map[int]bool{}
	for _, n := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		docs := []int(nil)
		if i, ok := ix.byName[n]; ok {
			docs = []int{i}
		} else {
			docs = ix.byLower[strings.ToLower(n)]
		}
		for _, i := range docs {
			if !seen[i] {
				seen[i] = true
				out = append(out, Hit{Name: ix.docs[i].Name, Score: 1})
			}
		}
	}
	return out
}
