package httpapi

// The JSON shapes of the API. They are the contract: the OpenAPI document
// is generated from these types (openapi.go), and the tests check every
// response against it. Rules that hold throughout:
//   - names are snake_case and every field is always present;
//   - an unknown value is null, never omitted and never "–";
//   - times are RFC 3339 in UTC, or a shorter calendar form where the
//     source gives only a day, month or year, with a *_precision field;
//   - durations are {"seconds": n, "human": "6h 13m"};
//   - every resource has links.
//
// The struct tag `doc` is the field's description in the OpenAPI document;
// `pattern`, `enum` and `format` constrain it there.

// Links point at a resource in its several forms. Fields that do not apply
// to a resource are null.
type Links struct {
	Self    string  `json:"self" doc:"This resource in the JSON API."`
	HTML    *string `json:"html" doc:"The same resource as a web page, or null when it has none."`
	Similar *string `json:"similar" doc:"The cases most like this one (cases only)."`
}

// PageLinks are the links of one page of a list.
type PageLinks struct {
	Self  string  `json:"self" doc:"This page."`
	HTML  *string `json:"html" doc:"The same list as a web page."`
	First string  `json:"first" doc:"The first page."`
	Prev  *string `json:"prev" doc:"The previous page, or null on the first."`
	Next  *string `json:"next" doc:"The next page, or null on the last."`
	Last  string  `json:"last" doc:"The last page."`
}

// Duration is a span of time.
type Duration struct {
	Seconds int64  `json:"seconds" doc:"Whole seconds."`
	Human   string `json:"human" doc:"As the pages print it: \"2m\", \"6h 13m\", \"3d 4h\"."`
}

// Timeline holds the moments of an incident as far as the sources give them.
type Timeline struct {
	Started            *string `json:"started" pattern:"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?)?)?$" doc:"When the incident began: RFC 3339 UTC (\"2026-08-24T16:56:00Z\") when known to the minute, else \"2026-08-24\", \"2026-08\" or \"2026\" as the source gives it; see started_precision. Null when no source gives the start (see reported)."`
	StartedPrecision   *string `json:"started_precision" enum:"time,day,month,year" doc:"How much of started the source gives: time (exact instant), day, month or year; null when started is."`
	Detected           *string `json:"detected" pattern:"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?)?)?$" doc:"When it was detected, in the same form as started; null when unknown."`
	DetectedPrecision  *string `json:"detected_precision" enum:"time,day,month,year" doc:"Precision of detected; null when unknown."`
	Mitigated          *string `json:"mitigated" pattern:"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?)?)?$" doc:"When the impact was mitigated; null when unknown."`
	MitigatedPrecision *string `json:"mitigated_precision" enum:"time,day,month,year" doc:"Precision of mitigated; null when unknown."`
	Resolved           *string `json:"resolved" pattern:"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?)?)?$" doc:"When it was resolved; null when unknown."`
	ResolvedPrecision  *string `json:"resolved_precision" enum:"time,day,month,year" doc:"Precision of resolved; null when unknown."`
	Reported           *string `json:"reported" pattern:"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?)?)?$" doc:"When the incident was first made public, given where no source gives the start (started is then null): it had begun by then. Null otherwise."`
	ReportedPrecision  *string `json:"reported_precision" enum:"time,day,month,year" doc:"Precision of reported; null when unknown."`
}

// TermRef names a vocabulary term a case is tagged with.
type TermRef struct {
	Facet string  `json:"facet" enum:"root_cause,component,symptom,contributing_factor" doc:"The facet the term belongs to."`
	Slug  string  `json:"slug" doc:"The term's stable identifier."`
	Name  string  `json:"name" doc:"The term's display name."`
	Group *string `json:"group" doc:"The component group slug (components only); null otherwise."`
	Links Links   `json:"links"`
}

// Tags are a case's vocabulary terms.
type Tags struct {
	RootCause           *TermRef  `json:"root_cause" doc:"The root cause, or null when the source does not disclose it."`
	Components          []TermRef `json:"components" doc:"Components involved."`
	Symptoms            []TermRef `json:"symptoms" doc:"Symptoms users or operators saw."`
	ContributingFactors []TermRef `json:"contributing_factors" doc:"Conditions that made it worse or likelier."`
}

// CaseSummary is a case as lists show it.
type CaseSummary struct {
	ID            string    `json:"id" pattern:"^IL-[0-9]{4}$" doc:"The case ID, IL-NNNN."`
	Title         string    `json:"title"`
	Company       string    `json:"company" doc:"The company or project that had the incident."`
	Year          int       `json:"year" doc:"The year the incident started, or, where no source gives the start, the year it was made public."`
	Timeline      Timeline  `json:"timeline"`
	Severity      *string   `json:"severity" doc:"A severity slug (see /api/v1/vocab); it follows from the case's symptoms by the rule the vocabulary gives, and is null for a case with no symptoms."`
	Summary       string    `json:"summary"`
	Tags          Tags      `json:"tags"`
	TimeToDetect  *Duration `json:"time_to_detect" doc:"From start to detection: from the timeline when both are exact, else as the source states it; null when unknown."`
	TimeToResolve *Duration `json:"time_to_resolve" doc:"From start to resolution, derived or stated as time_to_detect; null when unknown."`
	Links         Links     `json:"links"`
}

// ActionItem is a follow-up the company committed to.
type ActionItem struct {
	Text     string  `json:"text"`
	Estimate *string `json:"estimate" doc:"When the company expects it done, in its own words (\"October 2026\"); null when not given."`
}

// Source is a public document a case rests on.
type Source struct {
	URL                *string `json:"url" doc:"The document; null only for type seed-listing."`
	Type               string  `json:"type" doc:"A source-type slug (see /api/v1/vocab)."`
	Title              *string `json:"title"`
	Retrieved          *string `json:"retrieved" pattern:"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?)?)?$" doc:"When the library's curator read it; null when not recorded."`
	RetrievedPrecision *string `json:"retrieved_precision" enum:"time,day,month,year"`
	ArchivedURL        *string `json:"archived_url" doc:"A stored copy, or null."`
}

// Verification records how a case's facts were checked.
type Verification struct {
	Status  string  `json:"status" enum:"checked,partial,unchecked" doc:"checked: every fact against a stored copy; partial: some (note says which not); unchecked: no stored copy found."`
	Against *string `json:"against" doc:"The stored copy the facts were checked against."`
	Note    *string `json:"note"`
}

// Quote is text a source quotes verbatim: an error message, a status
// code, an alert or a log line that people saw.
type Quote struct {
	Text   string `json:"text" doc:"Verbatim, as the source quotes it."`
	Kind   string `json:"kind" enum:"error,status,alert,log" doc:"error: a message a program printed or returned; status: a status code or status-page wording; alert: a monitor's text; log: a log line."`
	Source string `json:"source" doc:"The url of the listed source that quotes it."`
}

// Case is one incident with everything the library knows about it.
type Case struct {
	CaseSummary
	Scope         *string      `json:"scope" doc:"What was affected."`
	UsersAffected *string      `json:"users_affected"`
	Region        *string      `json:"region"`
	Symptoms      *string      `json:"symptoms" doc:"What was seen, in prose (the symptom terms are in tags)."`
	Trigger       *string      `json:"trigger"`
	Detection     *string      `json:"detection"`
	Remediation   []string     `json:"remediation"`
	ActionItems   []ActionItem `json:"action_items"`
	Lessons       *string      `json:"lessons"`
	Quoted        []Quote      `json:"quoted" doc:"What people saw: the error messages, status codes, alerts and log lines the sources quote verbatim, each with the source that quotes it; empty when none is recorded."`
	Sources       []Source     `json:"sources"`
	Verification  Verification `json:"verification"`
}

// SnippetPart is a run of snippet text; match marks the words the query
// matched.
type SnippetPart struct {
	Text  string `json:"text"`
	Match bool   `json:"match"`
}

// Snippet is a short piece of a case's text around what matched. Text is
// the plain text; parts split the same text into matched and unmatched
// runs, so no offsets (bytes? UTF-16 units?) need agreeing on.
type Snippet struct {
	Field string        `json:"field" doc:"The case field it comes from: summary, symptoms, trigger, …"`
	Text  string        `json:"text" doc:"The snippet as plain text; the concatenation of parts."`
	Parts []SnippetPart `json:"parts"`
}

// Hit is one case in a result list.
type Hit struct {
	Case     CaseSummary `json:"case"`
	Score    *float64    `json:"score" doc:"Relevance; null when the query has no text."`
	Snippets []Snippet   `json:"snippets" doc:"Where the query text matched; empty without text."`
	Matched  []Match     `json:"matched" doc:"Why it matched: each query word or phrase the case holds, how, and in which fields; empty without text."`
	Terms    []TermRef   `json:"terms" doc:"The vocabulary terms the query names that this case is tagged with."`
}

// Match is one query word (or phrase) a hit holds.
type Match struct {
	Word      string   `json:"word" doc:"The word or phrase as the query wrote it."`
	Via       *string  `json:"via" doc:"Null when it matched as typed; else the synonym, near spelling or vocabulary term that matched, or what a recognised error signature means."`
	Signature bool     `json:"signature" doc:"True when word is an error signature recognised in the query (OOMKilled) and via what it means (out of memory)."`
	Fields    []string `json:"fields" doc:"The case fields holding it (title, summary, trigger, …); a facet name (root_cause, component, symptom, contributing_factor) when a vocabulary term matched; started when a year did."`
}

// RecognisedTerm is a vocabulary term the query names, offered as a filter.
type RecognisedTerm struct {
	TermCount
	Filter string `json:"filter" doc:"This search narrowed to the cases tagged with the term."`
}

// Suggestion is help for a query word that matched nothing or little.
type Suggestion struct {
	Word      string    `json:"word"`
	Spellings []string  `json:"spellings" doc:"Words the corpus knows that are spelled like it."`
	Terms     []TermRef `json:"terms" doc:"Vocabulary terms whose name or alias is like it."`
}

// TermCount is how many cases of a result set carry a term.
type TermCount struct {
	Facet string  `json:"facet" enum:"root_cause,component,symptom,contributing_factor"`
	Slug  string  `json:"slug"`
	Name  string  `json:"name"`
	Group *string `json:"group" doc:"The component group slug (components only)."`
	Count int     `json:"count"`
	Links Links   `json:"links"`
}

// ValueCount is how many cases of a result set have a value.
type ValueCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Facets counts a result set along every dimension it can be filtered by.
type Facets struct {
	RootCause          []TermCount  `json:"root_cause"`
	Component          []TermCount  `json:"component"`
	Symptom            []TermCount  `json:"symptom"`
	ContributingFactor []TermCount  `json:"contributing_factor"`
	Company            []ValueCount `json:"company"`
	Year               []ValueCount `json:"year"`
	Severity           []ValueCount `json:"severity"`
}

// AppliedQuery echoes the query a list answers, as the server understood it.
type AppliedQuery struct {
	Q                  *string  `json:"q" doc:"The query text, or null."`
	RootCause          []string `json:"root_cause"`
	Component          []string `json:"component"`
	Symptom            []string `json:"symptom"`
	ContributingFactor []string `json:"contributing_factor"`
	Company            []string `json:"company"`
	Severity           []string `json:"severity"`
	YearFrom           *int     `json:"year_from"`
	YearTo             *int     `json:"year_to"`
	Sort               string   `json:"sort" enum:"relevance,newest,oldest,longest"`
	Page               int      `json:"page"`
	PerPage            int      `json:"per_page"`
}

// CaseList is one page of a search.
type CaseList struct {
	Query  AppliedQuery `json:"query"`
	Total  int          `json:"total" doc:"Cases in the whole result set."`
	Pages  int          `json:"pages" doc:"Pages in the whole result set (at least 1)."`
	From   int          `json:"from" doc:"1-based position of the first item; 0 when the page is empty."`
	To     int          `json:"to" doc:"1-based position of the last item; 0 when the page is empty."`
	Fuzzy  bool         `json:"fuzzy" doc:"True when a query word the corpus does not know was matched by a near spelling; matched says which."`
	Notice string       `json:"notice" doc:"Empty, or, when the query ran in a cheaper form than asked, saying why."`
	// What the query meant, and help when it found little.
	Partial     bool             `json:"partial" doc:"True when too few cases hold every meaningful word, so cases holding part of the query follow those that hold all of it."`
	Complete    int              `json:"complete" doc:"Cases of the result set that hold every meaningful word of the query."`
	Terms       []RecognisedTerm `json:"terms" doc:"Vocabulary terms the query names by name, slug or alias, with the cases of the result set tagged with each; their tagged cases rank as if they held those words."`
	Unmatched   []string         `json:"unmatched" doc:"Query words that matched nothing."`
	Suggestions []Suggestion     `json:"suggestions" doc:"For words that matched nothing (and every word when results are few): near spellings and vocabulary terms."`
	Items       []Hit            `json:"items"`
	Facets      Facets           `json:"facets" doc:"Counts over the whole result set, most cases first."`
	Links       PageLinks        `json:"links"`
}

// RelatedCase is a case like another one, and why.
type RelatedCase struct {
	Case    CaseSummary `json:"case"`
	Score   float64     `json:"score" doc:"Similarity; higher is closer. Comparable within one list only."`
	Reasons []string    `json:"reasons" doc:"Why, in words: \"same root cause\", \"shared Database\"."`
	Reason  string      `json:"reason" doc:"The reasons joined as the pages print them."`
}

// CaseRef identifies a case briefly.
type CaseRef struct {
	ID    string `json:"id" pattern:"^IL-[0-9]{4}$"`
	Title string `json:"title"`
	Links Links  `json:"links"`
}

// SimilarCases lists the cases most like one case.
type SimilarCases struct {
	Case  CaseRef       `json:"case" doc:"The case they are like."`
	Items []RelatedCase `json:"items" doc:"Most similar first."`
	Links Links         `json:"links"`
}

// GroupRef is a component group.
type GroupRef struct {
	Slug       string `json:"slug"`
	Name       string `json:"name"`
	Definition string `json:"definition"`
}

// TopicTerm is the term a topic is about.
type TopicTerm struct {
	Facet      string    `json:"facet" enum:"root_cause,component,symptom,contributing_factor"`
	Slug       string    `json:"slug"`
	Name       string    `json:"name"`
	Definition string    `json:"definition"`
	IsGroup    bool      `json:"is_group" doc:"True when the slug names a component group, which gathers all its members."`
	Group      *GroupRef `json:"group" doc:"The component group of a component (or the group itself); null otherwise."`
}

// Topic is a vocabulary term with its cases.
type Topic struct {
	Term       TopicTerm   `json:"term"`
	Count      int         `json:"count" doc:"Cases tagged with the term (within any further filters given)."`
	Components []TermCount `json:"components" doc:"Components the topic's cases involve, most cases first."`
	Cases      CaseList    `json:"cases" doc:"One page of the topic's cases."`
	Links      Links       `json:"links"`
}

// VocabTerm is one term of the vocabulary.
type VocabTerm struct {
	Slug       string  `json:"slug"`
	Name       string  `json:"name"`
	Definition string  `json:"definition"`
	Group      *string `json:"group" doc:"The component group slug (components only)."`
	CaseCount  int     `json:"case_count" doc:"Cases in the library tagged with the term."`
	Links      Links   `json:"links"`
}

// VocabFacet is one facet with all its terms.
type VocabFacet struct {
	Facet       string      `json:"facet" enum:"root_cause,component,symptom,contributing_factor"`
	Name        string      `json:"name" doc:"Display name: \"Root cause\"."`
	PathSegment string      `json:"path_segment" doc:"The facet's URL segment: \"root-causes\"."`
	Terms       []VocabTerm `json:"terms" doc:"In vocabulary order."`
}

// VocabGroup is a component group with its members.
type VocabGroup struct {
	Slug       string   `json:"slug"`
	Name       string   `json:"name"`
	Definition string   `json:"definition"`
	Members    []string `json:"members" doc:"Slugs of the components in the group."`
	CaseCount  int      `json:"case_count" doc:"Cases involving any member."`
	Links      Links    `json:"links"`
}

// PlainTerm is a term of a closed list (severities, source types).
type PlainTerm struct {
	Slug       string `json:"slug"`
	Name       string `json:"name"`
	Definition string `json:"definition"`
	CaseCount  *int   `json:"case_count" doc:"Cases with this value; null where not counted (source types)."`
}

// Vocab is the whole controlled vocabulary.
type Vocab struct {
	Facets      []VocabFacet `json:"facets"`
	Groups      []VocabGroup `json:"component_groups"`
	Severities  []PlainTerm  `json:"severities" doc:"Most severe first."`
	SourceTypes []PlainTerm  `json:"source_types"`
	Links       Links        `json:"links"`
}

// FieldKnown is how many cases know one field.
type FieldKnown struct {
	Field string  `json:"field"`
	Known int     `json:"known"`
	Share float64 `json:"share" doc:"known divided by the number of cases, from 0 to 1."`
}

// TermCounts counts cases per term for every facet, zero counts included.
type TermCounts struct {
	RootCause          []TermCount `json:"root_cause"`
	Component          []TermCount `json:"component"`
	Symptom            []TermCount `json:"symptom"`
	ContributingFactor []TermCount `json:"contributing_factor"`
}

// Stats describes the corpus.
type Stats struct {
	Cases        int          `json:"cases"`
	Terms        TermCounts   `json:"terms"`
	Known        []FieldKnown `json:"known" doc:"Per case field, how many cases know it."`
	Verification []ValueCount `json:"verification" doc:"Cases by verification status."`
	Years        []ValueCount `json:"years"`
	Links        Links        `json:"links"`
}

// Index lists the API's endpoints.
type Index struct {
	Name      string            `json:"name"`
	OpenAPI   string            `json:"openapi" doc:"The OpenAPI 3.1 document."`
	Endpoints map[string]string `json:"endpoints" doc:"Operation ID to URL (templated where it takes a parameter)."`
	Links     Links             `json:"links"`
}

// Problem is an error, as RFC 9457 application/problem+json.
type Problem struct {
	Type     string  `json:"type" doc:"Always about:blank: the code member is the stable identifier."`
	Title    string  `json:"title" doc:"The HTTP status phrase."`
	Status   int     `json:"status"`
	Detail   string  `json:"detail" doc:"What was wrong, for a person, naming the parameter at fault."`
	Code     string  `json:"code" enum:"invalid,not_found,too_large,internal,method_not_allowed,not_acceptable,uri_too_long,rate_limited,unavailable,busy,canceled" doc:"Stable, machine-readable error code."`
	Param    *string `json:"param" doc:"The parameter at fault, or null."`
	Instance string  `json:"instance" doc:"The request path."`
}

// CheckSummary is a kubegap check as the list of checks shows it.
type CheckSummary struct {
	ID       string    `json:"id" doc:"The check's stable ID, e.g. KG001."`
	Title    string    `json:"title"`
	Severity string    `json:"severity" enum:"low,medium,high,critical" doc:"How much the gap matters, before any policy override."`
	Rule     string    `json:"rule" doc:"The rule in one sentence."`
	Guards   []TermRef `json:"guards" doc:"The vocabulary terms the check guards against; the check cites every case tagged with any of them."`
	Links    Links     `json:"links"`
}

// CheckList is every kubegap check.
type CheckList struct {
	Total  int            `json:"total"`
	Checks []CheckSummary `json:"checks" doc:"The catalogue, in its own order."`
	Links  Links          `json:"links"`
}

// Citation is a case a check cites, and why.
type Citation struct {
	Case   CaseSummary `json:"case"`
	Terms  []TermRef   `json:"terms" doc:"The check's guarded terms the case carries."`
	Reason string      `json:"reason" doc:"Why the case is cited, in words: \"tagged Retry amplification\"."`
}

// Check is one kubegap check with the cases it cites.
type Check struct {
	CheckSummary
	Why               string     `json:"why" doc:"Why the gap matters, in the incidents' terms."`
	Fix               string     `json:"fix" doc:"How to fix it, in words."`
	FixYAML           string     `json:"fix_yaml" doc:"A YAML snippet showing the fix; empty when the fix is not a manifest change."`
	Citations         []Citation `json:"citations" doc:"The library's cases tagged with a guarded term, newest first, at most 50; found when asked, so a new case is cited without a code change."`
	CitationsComplete bool       `json:"citations_complete" doc:"true when citations holds every such case; false when there are more (the guards' topics list them all)."`
}
