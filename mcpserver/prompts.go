package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// Prompt names.
const (
	promptLearn  = "learn_from_incidents"
	promptReview = "review_design"
)

// maxPromptCases bounds the cases a prompt puts in front of the model; the
// model can fetch more with the tools.
const maxPromptCases = 6

func (h *handlers) addPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{
		Name:        promptLearn,
		Title:       "Learn from incidents like this one",
		Description: "Gathers the past incidents most like a given case or a failure you describe, and asks for the lessons that apply to your system.",
		Arguments: []*mcp.PromptArgument{
			{Name: "incident", Required: true, Title: "Case ID or failure", Description: "a case ID (IL-0561) or, in words, a failure you are seeing or fear"},
			{Name: "context", Title: "Your system", Description: "the system or situation the lessons are for (optional)"},
		},
	}, h.learnPrompt)
	s.AddPrompt(&mcp.Prompt{
		Name:        promptReview,
		Title:       "Review a design against past incidents",
		Description: "Puts a design next to real incidents in the components it uses and asks for the failure modes it is exposed to, each backed by cited cases.",
		Arguments: []*mcp.PromptArgument{
			{Name: "design", Required: true, Title: "Design", Description: "the design to review: a description, a document or a diagram in words"},
			{Name: "components", Title: "Components", Description: "comma-separated component slugs the design uses (e.g. database,load-balancer); see the vocab tool"},
		},
	}, h.reviewPrompt)
}

func (h *handlers) learnPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	arg := strings.TrimSpace(req.Params.Arguments["incident"])
	situation := strings.TrimSpace(req.Params.Arguments["context"])
	if arg == "" {
		return nil, h.rpcErr(incidentlib.InvalidParam("incident", "give a case ID (IL-0561) or describe the failure in words"))
	}
	var b strings.Builder
	if _, ok := incidentlib.NormalizeCaseID(arg); ok {
		c, err := h.findCase(ctx, arg)
		if err != nil {
			return nil, h.rpcErr(err)
		}
		rel, err := h.lib.SimilarCases(ctx, c.ID, maxPromptCases-1)
		if err != nil {
			return nil, h.rpcErr(err)
		}
		fmt.Fprintf(&b, "I want to learn from incident %s and the incidents most like it, from the Incident Library.\n\n", c.ID)
		b.WriteString(h.caseMarkdown(c))
		b.WriteString("\n## The cases most like it\n\n")
		var hits []CaseHit
		for _, r := range rel {
			hit := h.caseHit(r.Case)
			hit.Why = r.Reason()
			hits = append(hits, hit)
		}
		if len(hits) == 0 {
			b.WriteString("None.\n")
		}
		writeHits(&b, hits)
	} else {
		hits, err := h.closestCases(ctx, arg, incidentlib.Filters{}, maxPromptCases)
		if err != nil {
			return nil, h.rpcErr(err)
		}
		fmt.Fprintf(&b, "I want to learn from past incidents like this one:\n\n> %s\n\n", oneLine(arg))
		b.WriteString("## The Incident Library's closest cases\n\n")
		if len(hits) == 0 {
			b.WriteString("None matched these words; search with other words.\n")
		}
		writeHits(&b, hits)
	}
	b.WriteString("\n## What to do\n\n")
	b.WriteString("1. Read the cases that matter in full with get_incident; widen with similar_incidents and search_incidents where a pattern shows.\n")
	b.WriteString("2. For each, say what failed, why (trigger, root cause, contributing factors), how it was detected and how it was ended.\n")
	b.WriteString("3. Draw the lessons: what to build, test, monitor or change in operations so it does not happen to us.\n")
	if situation != "" {
		fmt.Fprintf(&b, "4. Apply them to this system: %s\n", oneLine(situation))
	} else {
		b.WriteString("4. Apply them to the system we are working on.\n")
	}
	b.WriteString("\nCite every case you rely on by ID and URL. Do not claim anything about a case that its text does not say.\n")
	return promptResult("Learn from incidents like this one", b.String()), nil
}

func (h *handlers) reviewPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	design := strings.TrimSpace(req.Params.Arguments["design"])
	if design == "" {
		return nil, h.rpcErr(incidentlib.InvalidParam("design", "give the design to review, in words"))
	}
	var comps []string
	for _, c := range strings.Split(req.Params.Arguments["components"], ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(comps, c) {
			comps = append(comps, c)
		}
	}
	if err := h.checkSlugs(incidentlib.FacetComponent, comps); err != nil {
		return nil, h.rpcErr(err)
	}
	filters := incidentlib.Filters{Components: comps}
	hits, err := h.closestCases(ctx, design, filters, maxPromptCases)
	byWords := len(hits) > 0
	if err == nil && !byWords && len(comps) > 0 {
		// No case in those components shares the design's words: the
		// components alone still say where such systems failed.
		var res *incidentlib.SearchResult
		res, err = h.lib.SearchCases(ctx, incidentlib.Query{Filters: filters, Sort: incidentlib.SortNewest, PerPage: maxPromptCases})
		if err == nil {
			hits = h.casePage(res, "").Cases
		}
	}
	if err != nil {
		return nil, h.rpcErr(err)
	}
	var b strings.Builder
	b.WriteString("Review this design against real production incidents from the Incident Library.\n\n## The design\n\n")
	b.WriteString(design)
	b.WriteString("\n\n## Incidents to start from\n\n")
	switch {
	case len(hits) == 0:
		b.WriteString("None shares the design's words; find cases with search_incidents and list_incidents.\n")
	case !byWords:
		fmt.Fprintf(&b, "The newest cases involving %s:\n\n", strings.Join(comps, ", "))
	case len(comps) > 0:
		fmt.Fprintf(&b, "The cases involving %s closest to the design's words:\n\n", strings.Join(comps, ", "))
	default:
		b.WriteString("The cases closest to the design's words:\n\n")
	}
	writeHits(&b, hits)
	b.WriteString("\n## What to do\n\n")
	b.WriteString("1. List the design's components and dependencies; find the vocabulary slugs for them with vocab.\n")
	b.WriteString("2. For each, look up how such systems failed: list_incidents filtered by component, search_incidents for the mechanisms the design relies on (retries, failover, caches, config pushes, migrations, certificates, quotas), get_topic for recurring contributing factors.\n")
	b.WriteString("3. Read the relevant cases with get_incident before you rely on them.\n")
	b.WriteString("4. Report each failure mode the design is exposed to: what would happen, the cases where it happened (ID and URL), and the change to the design, its tests or its monitoring that would prevent or contain it. Put the most likely and most damaging first.\n")
	b.WriteString("\nCite only cases you read; say so where the library has no case for a risk.\n")
	return promptResult("Review a design against past incidents", b.String()), nil
}

func promptResult(desc, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{
		Description: desc,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}
}

// closestCases ranks cases by how many of the distinctive words of prose
// they contain. A library query wants every word to match, which a design
// or a story never does; so each word is asked on its own and a case scores
// the rarity (log N/df) of every word it matches, as a ranked OR would.
func (h *handlers) closestCases(ctx context.Context, prose string, f incidentlib.Filters, n int) ([]CaseHit, error) {
	all, err := h.lib.SearchCases(ctx, incidentlib.Query{Filters: f, PerPage: 1})
	if err != nil || all.Total == 0 {
		return nil, err
	}
	type scored struct {
		c     *incidentlib.Case
		score float64
		words []string
	}
	byID := map[string]*scored{}
	for _, w := range strings.Fields(keywords(prose)) {
		res, err := h.lib.SearchCases(ctx, incidentlib.Query{Text: w, Filters: f, PerPage: incidentlib.MaxPerPage})
		if err != nil {
			if incidentlib.ErrorCode(err) == incidentlib.EINVALID {
				continue // a word the engine will not take alone
			}
			return nil, err
		}
		if res.Fuzzy || res.Total == 0 || res.Total*2 > all.Total {
			continue // no exact match, or too common to tell cases apart
		}
		idf := math.Log(float64(all.Total) / float64(res.Total))
		for _, hit := range res.Hits {
			s := byID[hit.Case.ID]
			if s == nil {
				s = &scored{c: hit.Case}
				byID[hit.Case.ID] = s
			}
			s.score += idf
			s.words = append(s.words, w)
		}
	}
	ranked := make([]*scored, 0, len(byID))
	for _, s := range byID {
		ranked = append(ranked, s)
	}
	slices.SortFunc(ranked, func(a, b *scored) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return strings.Compare(b.c.ID, a.c.ID)
	})
	var out []CaseHit
	for _, s := range ranked[:min(n, len(ranked))] {
		hit := h.caseHit(s.c)
		hit.Why = "shares the words " + strings.Join(s.words, ", ")
		out = append(out, hit)
	}
	return out, nil
}

// maxQueryWords is the most words the library takes in one query.
const maxQueryWords = 32

// keywords turns prose (a design, a description of a failure) into query
// text: its first distinct words that are not stop words, at most
// maxQueryWords of them and at most incidentlib.MaxQueryLength bytes.
func keywords(s string) string {
	var out []string
	seen := map[string]bool{}
	n := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 3 || stopWords[w] || seen[w] {
			continue
		}
		if len(out) == maxQueryWords || n+len(w)+1 > incidentlib.MaxQueryLength {
			break
		}
		seen[w] = true
		out = append(out, w)
		n += len(w) + 1
	}
	return strings.Join(out, " ")
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for with that this from into onto are was were has have had not but
		its our their they them then than when what which who will would can could should may might must also
		all any each every some such only own same other more most very just one two use uses used using
		about after before over under between through during while where there here how why does did done
		made make makes took take takes got get gets once hour hours minute minutes day days time times want need
		been being because per via out off you your we us it is be on in of to as at by or an if so no`) {
		stopWords[w] = true
	}
}

// complete offers case IDs and component slugs for prompt arguments and the
// incident:// template, so that a client can suggest them as a person types.
func (h *handlers) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var candidates []string
	switch {
	case p.Ref != nil && p.Ref.Type == "ref/prompt" && p.Argument.Name == "components":
		candidates = h.lib.Vocabulary().Slugs(incidentlib.FacetComponent)
	case (p.Ref != nil && p.Ref.Type == "ref/prompt" && p.Argument.Name == "incident") ||
		(p.Ref != nil && p.Ref.Type == "ref/resource" && p.Argument.Name == "id"):
		cases, err := h.lib.Cases(ctx)
		if err != nil {
			return nil, h.rpcErr(err)
		}
		for _, c := range cases {
			candidates = append(candidates, c.ID)
		}
		slices.Sort(candidates)
	}
	prefix := strings.ToLower(p.Argument.Value)
	if i := strings.LastIndexByte(prefix, ','); i >= 0 && p.Argument.Name == "components" {
		prefix = strings.TrimSpace(prefix[i+1:])
	}
	out := []string{}
	total := 0
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			total++
			if len(out) < 100 {
				out = append(out, c)
			}
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: total, HasMore: total > len(out)}}, nil
}
