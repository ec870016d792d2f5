package engine

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"incidentlib"
)

// The cost model of a query. Every limit here bounds work that grows with
// something the caller controls; a query over a hard limit is refused
// before it runs, and a query whose typo-tolerant retry would be costly
// runs as typed only, with a notice saying so.
//
// The figures come from what was measured on the shipped corpus: a
// non-fuzzy query of a thousand bytes costs milliseconds whatever it holds,
// while fuzziness on short words (a one-letter word with two typos allowed
// matches nearly every term of three letters or fewer in the dictionary)
// turned one phrase into seconds of work and gigabytes of memory.
const (
	// maxQueryWords bounds the words of a query, counting every word
	// inside phrases: each is a posting-list walk in four fields.
	maxQueryWords = 64
	// maxPhraseWords bounds one phrase: a phrase query keeps the
	// positions of every word in play at once.
	maxPhraseWords = 16
	// maxFuzzyWords bounds how many words the typo-tolerant retry may
	// expand; more than that runs as typed only.
	maxFuzzyWords = 8
	// maxFuzzyRunes: a longer word gets no typo tolerance, since the
	// automaton that matches it with typos grows with its length (an
	// alphabet repeated thirty times is over the index library's limit).
	maxFuzzyRunes = 24
	// minFixedRunes is how many letters of a word must stay fixed when
	// typos are allowed: a word with fewer letters than typos plus this
	// expands to most of the dictionary.
	minFixedRunes = 3

	// DefaultQueryTimeout is how long one query may run when Options
	// gives no other figure. Ordinary queries take milliseconds; the
	// deadline only stops what the limits above did not foresee.
	DefaultQueryTimeout = 2 * time.Second
)

// queryPlan is what the cost check decided about a query.
type queryPlan struct {
	// fuzzy is whether the typo-tolerant retry may run.
	fuzzy bool
	// notice says why a retry was skipped; empty when nothing was.
	notice string
}

// planQuery checks a parsed query against the cost model. It refuses a
// query over a hard limit with an error naming q, and decides whether the
// typo-tolerant retry is affordable. fuzz gives the typos a word or phrase
// would be allowed (the query builder's rule), so that the check follows it.
func planQuery(p parsedText, fuzz func(string) int) (queryPlan, error) {
	words := len(p.words)
	for _, ph := range p.phrases {
		n := len(strings.Fields(ph))
		if n > maxPhraseWords {
			return queryPlan{}, incidentlib.InvalidParam("q",
				"a quoted phrase has %d words; at most %d are allowed in one phrase", n, maxPhraseWords)
		}
		words += n
	}
	if words > maxQueryWords {
		return queryPlan{}, incidentlib.InvalidParam("q",
			"the query has %d words (counting those in phrases); at most %d are allowed", words, maxQueryWords)
	}
	plan := queryPlan{fuzzy: true}
	fuzzyWords := 0
	check := func(w string, typos int) string {
		if typos <= 0 {
			return ""
		}
		fuzzyWords++
		n := utf8.RuneCountInString(w)
		switch {
		case n > maxFuzzyRunes:
			return "a word is longer than " + itoa(maxFuzzyRunes) + " letters"
		case n < typos+minFixedRunes:
			return "a word is too short to allow " + itoa(typos) + " typos"
		}
		return ""
	}
	for _, w := range p.words {
		if why := check(w, fuzz(w)); why != "" {
			return skipFuzzy(why), nil
		}
	}
	for _, ph := range p.phrases {
		// The builder gives a phrase one fuzziness for all its words.
		typos := fuzz(ph)
		for _, w := range strings.Fields(ph) {
			if why := check(w, typos); why != "" {
				return skipFuzzy(why), nil
			}
		}
	}
	if fuzzyWords > maxFuzzyWords {
		return skipFuzzy("the query has more than " + itoa(maxFuzzyWords) + " words to correct"), nil
	}
	return plan, nil
}

func skipFuzzy(why string) queryPlan {
	return queryPlan{notice: "Nothing matched as typed, and no typo-tolerant retry was run: " + why + "."}
}

// withQueryDeadline bounds one query's run time.
func (e *Engine) withQueryDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.queryTimeout)
}

// queryError maps an error from running a query (under a deadline derived
// from ctx, the caller's context) to a domain error. Errors
// the index library raises on a query it will not run (an automaton over
// its state limit, too many clauses) are the query's fault and say so; a
// deadline is a clear refusal; a caller that went away is reported as such.
// Anything else stays internal: it is logged and never shown.
func (e *Engine) queryError(ctx context.Context, err error) error {
	var de *incidentlib.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &de):
		return err
	case errors.Is(ctx.Err(), context.Canceled):
		return &incidentlib.Error{Code: incidentlib.ECANCELED, Message: "the request was canceled"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &incidentlib.Error{Code: incidentlib.EUNAVAILABLE, Param: "q",
			Message: "the search took longer than " + e.queryTimeout.String() + " and was stopped; use fewer or more specific words"}
	}
	msg := err.Error()
	for _, s := range []string{"dfa contains more than", "TooManyClauses", "too many clauses", "exceeded max"} {
		if strings.Contains(msg, s) {
			return incidentlib.InvalidParam("q", "the query is too complex to run; use fewer or shorter words")
		}
	}
	return err
}
