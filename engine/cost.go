package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/incidentlib/incidentlib"
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
	// maxPhraseWords bounds one phrase: a phrase query keeps the
	// positions of every word in play at once.
	maxPhraseWords = 16
	// maxFuzzyRunes: a longer word gets no typo tolerance, since the
	// automaton that matches it with typos grows with its length (an
	// alphabet repeated thirty times is over the index library's limit).
	// The plan's typo fallback (plan.go) skips such words.
	maxFuzzyRunes = 24

	// DefaultQueryTimeout is how long one query may run when Options
	// gives no other figure. Ordinary queries take milliseconds; the
	// deadline only stops what the limits above did not foresee.
	DefaultQueryTimeout = 2 * time.Second
)

// checkCost refuses a parsed query over a hard limit, with an error naming
// q. The plan already considers at most maxClauses meaningful words or
// phrases (the rest of a long pasted text is ignored) and the parser
// refuses more than maxExcluded exclusions; what neither bounds is the
// length of one phrase.
func checkCost(p parsedText) error {
	count := func(it item) error {
		if n := len(strings.Fields(it.text)); n > maxPhraseWords {
			return incidentlib.InvalidParam("q", "a quoted phrase has %d words; at most %d are allowed in one phrase", n, maxPhraseWords)
		}
		return nil
	}
	for _, c := range p.clauses {
		for _, it := range c.alts {
			if err := count(it); err != nil {
				return err
			}
		}
	}
	for _, it := range p.exclude {
		if err := count(it); err != nil {
			return err
		}
	}
	return nil
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
