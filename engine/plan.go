package engine

import (
	"context"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/incidentlib/incidentlib"
)

// Bounds of the query plan, so that a question costs a bounded number of
// posting-list walks however it is worded: at most maxClauses words, plus
// these expansions.
const (
	maxSynonymMatchers = 24 // other expressions of recognised synonyms
	maxTermMatchers    = 8  // recognised vocabulary terms
	maxFuzzyWords      = 8  // unknown words given a typo fallback
	maxFuzzyCandidates = 3  // spellings tried per unknown word
	fewResults         = 10 // below this many cases matching every word, partial matches follow
	suggestBelow       = 3  // below this many results, every word gets suggestions
	maxSuggestions     = 8  // words given suggestions in one result
)

// Weights of the ways a case can match a clause, relative to the word as
// typed.
const (
	synonymWeight = 0.9
	fuzzyWeight   = 0.7
	termWeight    = 0.5 // of the best text score of the clauses the term covers
	termCredit    = 0.5 // of a clause's weight, for a case that holds it only through a term
	leaningWeight = 0.3 // of the best text score of the word, for a matching case tagged with the term its word leans towards
	// sentenceClauses is how many words make a query a sentence, whose
	// words are weighed by what the corpus says of them.
	sentenceClauses = 4
	// meaningfulTopicality is the topicality (weight.go) from which a
	// word counts towards how much of a query a case must hold.
	meaningfulTopicality = 0.3
)

type matcherKind int

const (
	matchTyped matcherKind = iota
	matchSynonym
	matchFuzzy
	matchTerm
	matchYear
	matchSignature // a recognised error signature: any of its search words
	matchQuoted    // a recognised error signature in the cases' quotes
	matchLeaning   // the term the cases writing a word lean towards (weight.go)
)

// matcher is one posting-list walk of a plan: a clause's own words, or an
// expansion that stands in for the clauses in span.
type matcher struct {
	kind   matcherKind
	span   uint32
	q      query.Query       // nil for a term matcher
	term   *incidentlib.Term // matchTerm only
	year   int               // matchYear only
	seqs   [][]string        // analyzed token runs it looks for (not for terms)
	via    string            // the synonym, spelling or term name shown in "why it matched"
	weight float64
}

// planClause is a meaningful clause of the query.
type planClause struct {
	display string
	word    string // the single word, for typo fallback and suggestions; "" for phrases and ORs
	seqs    [][]string
	covered int                    // cases in the result pool covering it, after the walk
	sig     *incidentlib.Signature // set for a recognised error signature
	// topical is the share of its weight the clause keeps, learned from
	// the corpus (weight.go): low for words spread over every kind of
	// case ("make", "worse"), 1 for a signature.
	topical float64
}

// plan is how a query's text is run.
type plan struct {
	clauses  []planClause
	matchers []matcher
	exclude  []query.Query
	terms    []incidentlib.Term // recognised vocabulary terms
	fuzzy    map[int][]string   // clause → candidate stems tried
	spelled  map[string]string  // candidate stem → the corpus word it was found as
	// long is set for a sentence, a description or a pasted text (at
	// least sentenceClauses meaningful words, or an error signature):
	// every case holding any of its words is a candidate, ranked by how
	// much of the text it holds (runPlan).
	long bool
	// notice says why the typo fallback was not tried for a word, when a
	// bound of the cost model kept it from running.
	notice string
}

// anyField matches mk's query in any text field, with the fields' boosts.
func anyField(mk func(field string) query.Query) query.Query {
	var alts []query.Query
	for _, f := range textFields {
		q := mk(f.name)
		q.(query.BoostableQuery).SetBoost(f.boost)
		alts = append(alts, q)
	}
	return &fieldsQuery{DisjunctionQuery: query.NewDisjunctionQuery(alts), fields: alts}
}

// fieldsQuery is one word or phrase over every text field. As a Bleve
// disjunction it scores a case by the fields that hold it times the share
// of the fields that do (Bleve's coordination factor); a long query walks
// its fields one by one instead (runPlan), so a word counts in full in
// each field that holds it.
type fieldsQuery struct {
	*query.DisjunctionQuery
	fields []query.Query
}

func itemQuery(it item) query.Query {
	return anyField(func(field string) query.Query {
		if it.phrase {
			m := query.NewMatchPhraseQuery(it.text)
			m.SetField(field)
			return m
		}
		m := query.NewMatchQuery(it.text)
		m.SetField(field)
		m.SetOperator(query.MatchQueryOperatorAnd)
		return m
	})
}

func termQuery(stem string) query.Query {
	return anyField(func(field string) query.Query {
		t := query.NewTermQuery(stem)
		t.SetField(field)
		return t
	})
}

// newPlan turns parsed text into a plan. r answers whether the corpus knows
// a word and which spellings are near it.
func (e *Engine) newPlan(r index.IndexReader, p parsedText) (*plan, error) {
	a := e.analyzer()
	pl := &plan{fuzzy: map[int][]string{}, spelled: map[string]string{}}
	var stream []streamToken
	seen := map[string]bool{}
	termSpan := map[string]int{} // facet/slug → matcher index
	addTerm := func(t *incidentlib.Term, span uint32) bool {
		key := string(t.Facet) + "/" + t.Slug
		if i, ok := termSpan[key]; ok {
			pl.matchers[i].span |= span
			return true
		}
		if len(pl.terms) == maxTermMatchers {
			return false
		}
		termSpan[key] = len(pl.matchers)
		pl.terms = append(pl.terms, *t)
		pl.matchers = append(pl.matchers, matcher{kind: matchTerm, span: span, term: t, via: t.Name, weight: termWeight})
		return true
	}
	// A recognised error signature is one clause: any of the words the
	// cases write for its symptom will do; its terms stand in for it too.
	for i := range p.signatures {
		sig := &p.signatures[i]
		var alts []item
		var seqs [][]string
		for _, w := range sig.Search {
			ts := analyzedTerms(a, w)
			if len(ts) == 0 {
				continue
			}
			alts = append(alts, item{text: w, phrase: len(strings.Fields(w)) > 1 || strings.Contains(w, "-")})
			seqs = append(seqs, ts)
		}
		if len(alts) == 0 || len(pl.clauses) == maxClauses {
			continue
		}
		ci := len(pl.clauses)
		pl.clauses = append(pl.clauses, planClause{display: sig.Name, seqs: seqs, sig: sig, topical: 1})
		qs := make([]query.Query, len(alts))
		for k, it := range alts {
			qs[k] = itemQuery(it)
		}
		pl.matchers = append(pl.matchers, matcher{kind: matchSignature, span: 1 << uint(ci), q: query.NewDisjunctionQuery(qs), seqs: seqs, via: sig.Means, weight: 1})
		if len(e.quoteShows[sig.Name]) > 0 {
			pl.matchers = append(pl.matchers, matcher{kind: matchQuoted, span: 1 << uint(ci), via: sig.Means, weight: 1})
		}
		for k := range sig.Terms {
			addTerm(&sig.Terms[k], 1<<uint(ci))
		}
	}
	for _, c := range e.longClauses(a, p) {
		var alts []item
		var seqs [][]string
		question := true
		for _, it := range c.alts {
			ts := analyzedTerms(a, it.text)
			if len(ts) == 0 {
				continue
			}
			for _, t := range ts {
				if !e.lex.question[t] {
					question = false
				}
			}
			alts = append(alts, it)
			seqs = append(seqs, ts)
		}
		if len(alts) == 0 {
			continue
		}
		if question && len(alts) == 1 && !alts[0].phrase {
			stream = append(stream, streamToken{term: seqs[0][0], clause: -1})
			continue
		}
		key := strings.Join(flatten(seqs), " ")
		if seen[key] || len(pl.clauses) == maxClauses {
			continue
		}
		seen[key] = true
		ci := len(pl.clauses)
		pc := planClause{display: clause{alts: alts}.display(), seqs: seqs, topical: 1}
		if len(alts) == 1 && !alts[0].phrase && len(seqs[0]) == 1 {
			pc.word = alts[0].text
		}
		pl.clauses = append(pl.clauses, pc)
		var alt query.Query
		if len(alts) == 1 {
			alt = itemQuery(alts[0])
		} else {
			qs := make([]query.Query, len(alts))
			for i, it := range alts {
				qs[i] = itemQuery(it)
			}
			alt = query.NewDisjunctionQuery(qs)
		}
		pl.matchers = append(pl.matchers, matcher{kind: matchTyped, span: 1 << uint(ci), q: alt, seqs: seqs, weight: 1})
		if len(alts) == 1 {
			for _, t := range seqs[0] {
				stream = append(stream, streamToken{term: t, clause: ci})
			}
		} else {
			stream = append(stream, streamToken{term: "\x00", clause: -1}) // an OR breaks a run
		}
	}
	for _, it := range p.exclude {
		if len(analyzedTerms(a, it.text)) > 0 {
			pl.exclude = append(pl.exclude, itemQuery(it))
		}
	}

	// Learned word weights, for a sentence only: a few keywords are each
	// chosen on purpose, while a question or a description carries words
	// ("make", "kept", "worse") that say little about what it asks.
	words := 0
	for _, pc := range pl.clauses {
		if pc.sig == nil {
			words++
		}
	}
	pl.long = words >= sentenceClauses || len(p.signatures) > 0
	if words >= sentenceClauses {
		for ci := range pl.clauses {
			if pc := &pl.clauses[ci]; pc.sig == nil {
				pc.topical = e.clauseTopicality(r, pc.seqs)
			}
		}
	}

	// Vocabulary terms and synonyms named in the query.
	covered := uint32(0)
	nSyn := 0
	synSeen := map[string]bool{}
	for _, f := range e.lex.find(stream) {
		if f.expr.term != nil {
			if addTerm(f.expr.term, f.span) {
				covered |= f.span
			}
			continue
		}
		for _, other := range e.lex.sets[f.expr.synonyms] {
			key := strings.Join(other.tokens, " ")
			if equalTokens(other.tokens, f.expr.tokens) || len(other.tokens) == 0 || synSeen[key] || nSyn == maxSynonymMatchers {
				continue
			}
			synSeen[key] = true
			nSyn++
			var q query.Query
			if len(other.tokens) == 1 {
				q = termQuery(other.tokens[0])
			} else {
				q = itemQuery(item{text: other.text, phrase: true})
			}
			pl.matchers = append(pl.matchers, matcher{kind: matchSynonym, span: f.span, q: q, seqs: [][]string{other.tokens}, via: other.text, weight: synonymWeight})
			covered |= f.span
		}
	}

	// Irregular verbs: withdrawn also matches withdrew and withdraw (and so
	// withdrawal), as a synonym would.
	for ci, pc := range pl.clauses {
		if pc.word == "" || pc.sig != nil {
			continue
		}
		for _, o := range e.lex.forms[pc.seqs[0][0]] {
			if nSyn == maxSynonymMatchers || synSeen[o] || commonerThan(r, o, len(e.cases)/5) {
				continue // a form most cases write says little and costs a long walk
			}
			synSeen[o] = true
			nSyn++
			pl.matchers = append(pl.matchers, matcher{kind: matchSynonym, span: 1 << uint(ci), q: termQuery(o), seqs: [][]string{{o}}, via: o, weight: synonymWeight})
			covered |= 1 << uint(ci)
		}
	}

	// Typo fallback, only for single words the corpus does not know and no
	// synonym or term stands in for.
	nFuzzy := 0
	for ci, pc := range pl.clauses {
		if pc.word == "" || covered&(1<<uint(ci)) != 0 || nFuzzy == maxFuzzyWords {
			continue
		}
		stem := pc.seqs[0][0]
		d := fuzziness(pc.word)
		if d == 0 || hasDigit(pc.word) || known(r, stem) {
			continue
		}
		if utf8.RuneCountInString(pc.word) > maxFuzzyRunes {
			// A very long word's typo automaton is over the index
			// library's limit: it is matched as typed, and the result
			// says so.
			pl.notice = "No near spellings were tried for a word longer than " + itoa(maxFuzzyRunes) + " letters."
			continue
		}
		// The corpus word nearest to what was typed, the most written
		// first; the index's own fuzzy walk over stems when none is near.
		var cands []string
		for _, w := range e.spellingList().nearestWords(pc.word, d, maxFuzzyCandidates) {
			if ts := analyzedTerms(a, w); len(ts) == 1 && !slices.Contains(cands, ts[0]) {
				cands = append(cands, ts[0])
				pl.spelled[ts[0]] = w
			}
		}
		if len(cands) == 0 {
			cands = nearSpellings(r, stem, d)
		}
		if len(cands) == 0 {
			continue
		}
		nFuzzy++
		pl.fuzzy[ci] = cands
		for _, c := range cands {
			pl.matchers = append(pl.matchers, matcher{kind: matchFuzzy, span: 1 << uint(ci), q: termQuery(c), seqs: [][]string{{c}}, via: c, weight: fuzzyWeight})
		}
	}
	// A meaningful word whose cases lean clearly towards a vocabulary
	// term ranks the matching cases tagged with it a little higher: the
	// corpus's own tags say what the word is about.
	if e.leaningEnabled {
		for ci, pc := range pl.clauses {
			if pc.word == "" || pc.sig != nil || covered&(1<<uint(ci)) != 0 || pc.topical < meaningfulTopicality {
				continue
			}
			if t, ok := e.leaning(r, pc.seqs[0][0]); ok {
				if _, named := termSpan[string(t.Facet)+"/"+t.Slug]; !named {
					pl.matchers = append(pl.matchers, matcher{kind: matchLeaning, span: 1 << uint(ci), term: t, via: t.Name, weight: leaningWeight})
				}
			}
		}
	}
	// A year ("github 2018") matches the cases that started in it.
	for ci, pc := range pl.clauses {
		if y, ok := yearOf(pc.word); ok && e.facets.minYear <= y && y <= e.facets.maxYear {
			pl.matchers = append(pl.matchers, matcher{kind: matchYear, span: 1 << uint(ci), year: y, via: "started in " + pc.word, weight: termWeight})
		}
	}
	return pl, nil
}

// maxTopicalStems bounds the words of one clause whose weights are looked
// up: the first few words of a phrase say enough.
const maxTopicalStems = 4

// clauseTopicality is the largest topicality of the clause's words: a
// phrase or an OR counts as much as its most meaningful word.
func (e *Engine) clauseTopicality(r index.IndexReader, seqs [][]string) float64 {
	best := 0.0
	n := 0
	for _, s := range seqs {
		for _, stem := range s {
			if n == maxTopicalStems {
				return max(best, minTopicality)
			}
			n++
			best = max(best, e.wordTopicality(r, stem))
		}
	}
	return max(best, minTopicality)
}

func flatten(seqs [][]string) []string {
	var out []string
	for _, s := range seqs {
		out = append(out, s...)
	}
	return out
}

// commonerThan reports whether some text field holds the analyzed term in
// more than n cases.
func commonerThan(r index.IndexReader, stem string, n int) bool {
	for _, f := range textFields {
		tfr, err := r.TermFieldReader(context.Background(), []byte(stem), f.name, false, false, false)
		if err != nil {
			continue
		}
		c := tfr.Count()
		tfr.Close()
		if c > uint64(n) {
			return true
		}
	}
	return false
}

// known reports whether any text field holds the analyzed term.
func known(r index.IndexReader, stem string) bool {
	for _, f := range textFields {
		tfr, err := r.TermFieldReader(context.Background(), []byte(stem), f.name, false, false, false)
		if err != nil {
			continue
		}
		n := tfr.Count()
		tfr.Close()
		if n > 0 {
			return true
		}
	}
	return false
}

// nearSpellings returns up to maxFuzzyCandidates indexed terms within d
// edits of stem, the most common first.
func nearSpellings(r index.IndexReader, stem string, d int) []string {
	fz, ok := r.(index.IndexReaderFuzzy)
	if !ok {
		return nil
	}
	type cand struct {
		term  string
		count uint64
		dist  uint8
	}
	best := map[string]cand{}
	for _, f := range textFields {
		dict, err := fz.FieldDictFuzzy(f.name, stem, d, "")
		if err != nil {
			continue
		}
		for n := 0; n < 10000; n++ { // a fuzzy dictionary walk is bounded too
			de, err := dict.Next()
			if err != nil || de == nil {
				break
			}
			c := best[de.Term]
			c.term, c.count, c.dist = de.Term, c.count+de.Count, de.EditDistance
			best[de.Term] = c
		}
		dict.Close()
	}
	list := make([]cand, 0, len(best))
	for _, c := range best {
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].dist != list[j].dist {
			return list[i].dist < list[j].dist
		}
		if list[i].count != list[j].count {
			return list[i].count > list[j].count
		}
		return list[i].term < list[j].term
	})
	var out []string
	for _, c := range list {
		if len(out) == maxFuzzyCandidates {
			break
		}
		out = append(out, c.term)
	}
	return out
}

// walkFields runs q as walk does, but a word or phrase over every text
// field (anyField) is walked field by field: fn is called once for each
// field that holds it, with that field's score, so the scores add up
// without Bleve's coordination factor (the share of the fields that hold
// it), which would make a word found only in a case's body count a fifth
// of what it scores there.
func (e *Engine) walkFields(ctx context.Context, r index.IndexReader, q query.Query, allowed bitset, fn func(ci int, score float64)) error {
	fq, ok := q.(*fieldsQuery)
	if !ok {
		return e.walk(ctx, r, q, allowed, fn)
	}
	for _, f := range fq.fields {
		if err := e.walk(ctx, r, f, allowed, fn); err != nil {
			return err
		}
	}
	return nil
}

// walk runs one Bleve query and calls fn for every matching case that
// passes allowed, with its score.
func (e *Engine) walk(ctx context.Context, r index.IndexReader, q query.Query, allowed bitset, fn func(ci int, score float64)) error {
	ctx = context.WithValue(ctx, search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return index.BM25Scoring }))
	s, err := q.Searcher(ctx, r, e.idx.Mapping(), search.SearcherOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0), IndexReader: r}
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		dm, err := s.Next(sctx)
		if err != nil {
			return err
		}
		if dm == nil {
			return nil
		}
		num := binary.BigEndian.Uint64(dm.IndexInternalID)
		if num < uint64(len(e.docNum)) {
			if ci := int(e.docNum[num]); ci >= 0 && (allowed == nil || allowed.has(ci)) {
				fn(ci, dm.Score)
			}
		}
		sctx.DocumentMatchPool.Put(dm)
	}
}

// runPlan walks every matcher of the plan and returns the result set in
// no particular order with each case's score. Cases that match every
// clause rank first; below fewResults of them, cases matching enough of
// the meaningful clauses follow, ranked by score weighted by how much of
// the query (by rarity of its words) they cover.
// The buffers it returns hold the set; give them back with releaseMatches.
func (e *Engine) runPlan(ctx context.Context, r index.IndexReader, pl *plan, allowed bitset) (buf *matchBuffers, complete int, partial bool, err error) {
	buf = e.matchBuffers()
	set, score, mask, text := buf.set[:0], buf.score, buf.mask, buf.text
	release := func() {
		buf.set = set
		e.releaseMatches(buf)
	}
	maxTyped := make([]float64, len(pl.clauses))
	// A query with a recognised signature is long (newPlan): its cases
	// are ranked with the rest of the query, not above it.
	var sigClauses uint32
	for ci, pc := range pl.clauses {
		if pc.sig != nil {
			sigClauses |= 1 << uint(ci)
		}
	}
	for mi := range pl.matchers {
		m := &pl.matchers[mi]
		if m.kind == matchTerm || m.kind == matchYear || m.kind == matchQuoted || m.kind == matchLeaning {
			continue
		}
		ci := -1
		if m.kind == matchTyped || m.kind == matchSignature {
			ci = bits.TrailingZeros32(m.span)
		}
		w := m.weight * pl.clauses[bits.TrailingZeros32(m.span)].topical
		walk := e.walk
		if pl.long {
			walk = e.walkFields
		}
		err := walk(ctx, r, m.q, allowed, func(c int, s float64) {
			if mask[c] == 0 {
				set = append(set, c)
			}
			mask[c] |= m.span
			text[c] |= m.span
			score[c] += w * s
			if ci >= 0 && s > maxTyped[ci] {
				maxTyped[ci] = s
			}
		})
		if err != nil {
			release()
			return nil, 0, false, err
		}
	}
	// A term's tagged cases count as matching the clauses that name it,
	// scored as a share of the best text match of those clauses.
	fallback := 0.0
	for _, s := range maxTyped {
		fallback = max(fallback, s)
	}
	if fallback == 0 {
		fallback = 1
	}
	for mi := range pl.matchers {
		m := &pl.matchers[mi]
		if m.kind == matchLeaning {
			ci := bits.TrailingZeros32(m.span)
			boost := maxTyped[ci] * pl.clauses[ci].topical * m.weight
			for _, c := range e.facets.tagged(m.term) {
				if text[c]&m.span != 0 {
					score[c] += boost
				}
			}
			continue
		}
		if m.kind != matchTerm && m.kind != matchYear && m.kind != matchQuoted {
			continue
		}
		// A term is one idea however many words name it: it scores as
		// its best word would, not as their sum, so that "cleanup script
		// deleted" does not outweigh the rest of a sentence.
		boost := 0.0
		for ci, pc := range pl.clauses {
			if m.span&(1<<uint(ci)) != 0 {
				if m.kind == matchTerm && len(pl.clauses) >= sentenceClauses {
					boost = max(boost, max(maxTyped[ci], fallback/2)*pc.topical)
				} else {
					boost += max(maxTyped[ci], fallback/2) * pc.topical
				}
			}
		}
		boost *= m.weight
		var cases []int
		switch m.kind {
		case matchTerm:
			cases = e.facets.tagged(m.term)
		case matchQuoted:
			// What people saw is the strongest evidence of a symptom:
			// the best text match of the clause, on top of any other.
			cases = e.quoteShows[pl.clauses[bits.TrailingZeros32(m.span)].sig.Name]
			boost = max(maxTyped[bits.TrailingZeros32(m.span)], fallback)
		default:
			cases = e.facets.startedIn(m.year)
		}
		for _, c := range cases {
			if allowed != nil && !allowed.has(c) {
				continue
			}
			if mask[c] == 0 {
				set = append(set, c)
			}
			mask[c] |= m.span
			score[c] += boost
		}
	}
	if len(pl.exclude) > 0 {
		out := newBitset(len(e.cases))
		for _, q := range pl.exclude {
			if err := e.walk(ctx, r, q, allowed, func(c int, _ float64) { out.set(c) }); err != nil {
				release()
				return nil, 0, false, err
			}
		}
		kept := set[:0]
		for _, c := range set {
			if out.has(c) {
				score[c], mask[c], text[c] = 0, 0, 0
				continue
			}
			kept = append(kept, c)
		}
		set = kept
	}

	// How many cases cover each clause, and which clauses count.
	var req uint32
	for _, c := range set {
		for m := mask[c]; m != 0; m &= m - 1 {
			pl.clauses[bits.TrailingZeros32(m)].covered++
		}
	}
	idf := make([]float64, len(pl.clauses))
	total := 0.0
	for ci, pc := range pl.clauses {
		if pc.covered > 0 {
			req |= 1 << uint(ci)
			idf[ci] = math.Log(1+float64(len(e.cases))/float64(pc.covered)) * pc.topical
			total += idf[ci]
		}
	}
	if sigClauses&req != 0 {
		// The recognised signatures together weigh as much as the rest
		// of the query: pasted text around them is mostly words no case
		// writes.
		others := 0.0
		for ci := range pl.clauses {
			if req&(1<<uint(ci)) != 0 && sigClauses&(1<<uint(ci)) == 0 {
				others += idf[ci]
			}
		}
		share := others / float64(bits.OnesCount32(req&sigClauses))
		for ci := range pl.clauses {
			if req&sigClauses&(1<<uint(ci)) != 0 && idf[ci] < share {
				total += share - idf[ci]
				idf[ci] = share
			}
		}
	}
	// A case must hold enough of the query's meaningful clauses (the
	// number minShouldMatch asks): words spread over every kind of case
	// ("make", "worse") add to the score but do not decide. A clause a
	// case holds only through a vocabulary term counts termCredit of a
	// clause: a term adds candidates, it does not stand in for the
	// query's other words.
	var meaningful uint32
	for ci, pc := range pl.clauses {
		if req&(1<<uint(ci)) != 0 && pc.topical >= meaningfulTopicality {
			meaningful |= 1 << uint(ci)
		}
	}
	if meaningful == 0 {
		meaningful = req
	}
	// When terms name the whole meaningful query ("retry storm"), their
	// cases hold it as fully as cases whose text says so.
	credit := termCredit
	var termSpans uint32
	for _, m := range pl.matchers {
		if m.kind == matchTerm {
			termSpans |= m.span
		}
	}
	// A signature's terms are wider than it (OOMKilled brings the cases
	// tagged resource exhaustion, which also holds a Redis client limit):
	// a case tagged so does not hold the signature as fully as one whose
	// text shows it.
	termSpans &^= sigClauses
	if meaningful&^termSpans == 0 {
		credit = 1
	}
	heldBy := func(c int, got uint32) float64 {
		return float64(bits.OnesCount32(text[c]&meaningful)) + credit*float64(bits.OnesCount32(got&meaningful&^text[c]))
	}
	need := float64(bits.OnesCount32(meaningful))
	fullNeed := need
	full := 0 // cases holding every meaningful clause
	for _, c := range set {
		if heldBy(c, mask[c]&req) >= need-1e-9 {
			full++
		}
	}
	if full < fewResults && need > 1 {
		need = float64(minShouldMatch(int(need)))
	}
	// Or, as for a query of keywords, enough of all its clauses: a case
	// holding the query's rarest word and a few common ones stays.
	nAll := bits.OnesCount32(req)
	needAll := nAll
	if full < fewResults && nAll > 1 {
		needAll = minShouldMatch(nAll)
	}
	kept := set[:0]
	best := 0.0
	for _, c := range set {
		got := mask[c] & req
		held := heldBy(c, got)
		cov := 0.0
		for m := got; m != 0; m &= m - 1 {
			ci := bits.TrailingZeros32(m)
			if text[c]&(1<<uint(ci)) != 0 {
				cov += idf[ci]
			} else {
				cov += idf[ci] * credit
			}
		}
		if total > 0 {
			cov /= total
		}
		heldAll := float64(bits.OnesCount32(text[c]&req)) + credit*float64(bits.OnesCount32(got&^text[c]))
		if got == 0 || (!pl.long && held < need-1e-9 && heldAll < float64(needAll)-1e-9) {
			score[c], mask[c], text[c] = 0, 0, 0
			continue
		}
		if got != req || (credit < 1 && text[c]&req != req) {
			if pl.long {
				// A long text: BM25 over its words, times the share
				// of it the case holds.
				score[c] *= cov
			} else {
				score[c] *= cov * cov
			}
		}
		if held < fullNeed-1e-9 {
			best = max(best, score[c])
		}
		if got != req {
			partial = true // the result says which hits hold every word
		}
		kept = append(kept, c)
	}
	set = kept
	if best > 0 {
		// Every case holding all meaningful clauses ranks above every
		// partial one.
		for _, c := range set {
			if heldBy(c, mask[c]&req) >= fullNeed-1e-9 {
				score[c] += best
			}
		}
	}
	buf.set = set
	all := 0 // cases holding every clause, as the result reports them
	for _, c := range set {
		if mask[c]&req == req {
			all++
		}
	}
	return buf, all, partial, nil
}

// minShouldMatch is how many of n meaningful clauses a case must match
// when too few match them all: one of a two-word query, half of a short
// one, a third of a long one (a pasted paragraph holds many words no case
// shares). Partial matches rank below full ones and by how much of the
// query they cover, so leniency here costs little at the top.
func minShouldMatch(n int) int {
	switch {
	case n <= 2:
		return 1
	case n <= 6:
		return (n + 1) / 2
	}
	return max(3, (n+2)/3)
}

// tagged lists the cases tagged with a term.
func (fi *facetIndex) tagged(t *incidentlib.Term) []int {
	d := dimOf(t.Facet)
	if d < 0 {
		return nil
	}
	no, ok := fi.dims[d].no[t.Slug]
	if !ok {
		return nil
	}
	var out []int
	for w, word := range fi.dims[d].postings[no] {
		for ; word != 0; word &= word - 1 {
			out = append(out, w*64+bits.TrailingZeros64(word))
		}
	}
	return out
}

// startedIn lists the cases that started in year y.
func (fi *facetIndex) startedIn(y int) []int {
	var out []int
	for c, cy := range fi.caseYear {
		if int(cy) == y {
			out = append(out, c)
		}
	}
	return out
}

// yearOf reads a four-digit year.
func yearOf(w string) (int, bool) {
	if len(w) != 4 {
		return 0, false
	}
	y := 0
	for _, r := range w {
		if r < '0' || r > '9' {
			return 0, false
		}
		y = y*10 + int(r-'0')
	}
	return y, y >= 1900
}

// hasDigit reports whether a word holds a digit: numbers, versions and
// error codes are never typos of a word.
func hasDigit(w string) bool { return strings.ContainsAny(w, "0123456789") }

// longClauses returns the query's clauses; in a long text (a sentence, a
// description, a pasted alert: at least sentenceClauses meaningful words,
// or an error signature) the words written together are also taken
// apart. A word joined by hyphens or dots (iptables-restore,
// ingress-nginx, facebook.com, nginx.conf) becomes its parts, each a word
// of its own: a paste names things as its tools print them, the cases as
// people write them. A quoted phrase stays, and its words are added: a
// quoted error message is rarely written word for word by the cases. Parts
// with digits (v1.8.4, us-east-1's 1) are left out. A short query keeps
// them whole (us-east-1, read-only, "split brain").
func (e *Engine) longClauses(a analysis.Analyzer, p parsedText) []clause {
	words := 0
	for _, c := range p.clauses {
		for _, t := range analyzedTerms(a, c.alts[0].text) {
			if !e.lex.question[t] {
				words++
				break
			}
		}
	}
	if words < sentenceClauses && len(p.signatures) == 0 {
		return p.clauses
	}
	split := func(s string) []clause {
		var out []clause
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == ' ' }) {
			if !hasDigit(w) {
				out = append(out, clause{alts: []item{{text: w}}})
			}
		}
		return out
	}
	out := make([]clause, 0, len(p.clauses))
	for _, c := range p.clauses {
		switch it := c.alts[0]; {
		case len(c.alts) > 1 || !strings.ContainsAny(it.text, ". "):
			out = append(out, c)
		case it.phrase && !it.joined:
			out = append(out, c)
			out = append(out, split(it.text)...)
		default:
			if parts := split(it.text); len(parts) > 0 {
				out = append(out, parts...)
			} else {
				out = append(out, c)
			}
		}
	}
	return out
}
