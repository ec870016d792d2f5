package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
)

// The golden pages are rendered from this small fixed corpus, not from the
// shipped one, so that adding cases to the library does not change them.

func fixtureVocabulary() *incidentlib.Vocabulary {
	rc := func(slug, name, def string) incidentlib.Term {
		return incidentlib.Term{Facet: incidentlib.FacetRootCause, Slug: slug, Name: name, Definition: def}
	}
	comp := func(slug, name, group, def string) incidentlib.Term {
		return incidentlib.Term{Facet: incidentlib.FacetComponent, Slug: slug, Name: name, Group: group, Definition: def}
	}
	sym := func(slug, name, def string) incidentlib.Term {
		return incidentlib.Term{Facet: incidentlib.FacetSymptom, Slug: slug, Name: name, Definition: def}
	}
	cf := func(slug, name, def string) incidentlib.Term {
		return incidentlib.Term{Facet: incidentlib.FacetContributingFactor, Slug: slug, Name: name, Definition: def}
	}
	terms := map[incidentlib.Facet][]incidentlib.Term{
		incidentlib.FacetRootCause: {
			rc("config-change", "Configuration change", "A change to settings rather than code brought the fault in."),
			rc("software-bug", "Software defect", "Code behaved wrongly once some condition arose."),
		},
		incidentlib.FacetComponent: {
			comp("application-database", "Application database", "database", "The database that holds an application's records."),
			comp("in-memory-cache", "In-memory cache", "cache", "A cache such as Redis or Memcached."),
			comp("load-balancer", "Load balancer", "network", "What spreads requests over servers."),
		},
		incidentlib.FacetSymptom: {
			sym("high-error-rate", "High error rate", "Many requests failed."),
			sym("high-latency", "High latency", "Requests took far longer than usual."),
			sym("data-loss", "Data loss", "Data was lost for good."),
		},
		incidentlib.FacetContributingFactor: {
			cf("retry-amplification", "Retry amplification", "Retries multiplied the load on a struggling system."),
			cf("no-load-shedding", "No load shedding or circuit breaker", "Nothing turned excess work away."),
		},
	}
	groups := []incidentlib.Group{
		{Slug: "database", Name: "Database", Definition: "Systems that hold durable records."},
		{Slug: "cache", Name: "Cache", Definition: "Fast, disposable copies of data."},
		{Slug: "network", Name: "Network", Definition: "What carries traffic."},
	}
	severities := []incidentlib.Term{
		{Slug: "critical", Name: "Critical"}, {Slug: "major", Name: "Major"}, {Slug: "minor", Name: "Minor"},
	}
	sourceTypes := []incidentlib.Term{
		{Slug: "official-status", Name: "Official status page"},
		{Slug: "official-blog", Name: "Official blog post"},
		{Slug: "news", Name: "News"},
	}
	return incidentlib.NewVocabulary(terms, groups, severities, sourceTypes)
}

func ts(s string) incidentlib.Timestamp {
	t, err := incidentlib.ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

// hostile is text a case must show as text, never as markup.
const (
	hostileScript = `<script>alert("x")</script>`
	hostileAttr   = `"><img src=x onerror=alert(1)>`
)

func fixtureCases() []*incidentlib.Case {
	return []*incidentlib.Case{
		{
			ID: "IL-0001", Title: "Checkout failed for two hours as retries overloaded the orders database", Company: "Examplecorp",
			Timeline: incidentlib.Timeline{Started: ts("2024-03-05T14:02:00Z"), Detected: ts("2024-03-05T14:09:00Z"), Resolved: ts("2024-03-05T16:15:00Z")},
			Severity: "major", Scope: "Checkout and order history in every region", UsersAffected: "About 40% of shoppers", Region: "global",
			Summary:      "A configuration change halved the orders database connection pool.\nClients retried every failed call at once.\n\nEngineers restored the pool size and the retries drained.",
			Symptoms:     "Checkout returned HTTP 503 errors and pages took seconds to load.",
			SymptomTerms: []string{"high-error-rate", "high-latency"},
			Trigger:      "A configuration push that changed the connection pool size.",
			RootCause:    "config-change",
			Components:   []string{"application-database", "in-memory-cache"},
			ContributingFactors: []string{
				"retry-amplification", "no-load-shedding",
			},
			Detection:   "An alert on the checkout error rate paged the on-call engineer after seven minutes.",
			Remediation: []string{"Rolled back the configuration push", "Restarted the checkout service"},
			ActionItems: []incidentlib.ActionItem{{Text: "Add jittered backoff to client retries", Estimate: "Q2 2024"}, {Text: "Validate pool sizes before a push"}},
			Lessons:     "A retry policy without backoff turns a small capacity loss into an outage.",
			Sources: []incidentlib.Source{{URL: "https://status.example.com/incidents/1", Type: "official-status", Title: "Checkout errors",
				Retrieved: ts("2024-03-10"), ArchivedURL: "https://archive.example.org/status.example.com/incidents/1"}},
			Verification: incidentlib.Verification{Status: incidentlib.VerificationChecked, Against: "the official status page"},
		},
		{
			ID: "IL-0002", Title: "A cache flag flip sent every read to the database", Company: "Samplesoft",
			Timeline:     incidentlib.Timeline{Started: ts("2023-11-20")},
			Summary:      "A feature flag disabled the read cache and the database saturated; clients retried.",
			SymptomTerms: []string{"high-latency"},
			RootCause:    "config-change",
			Components:   []string{"application-database", "in-memory-cache"},
			Sources:      []incidentlib.Source{{URL: "https://blog.samplesoft.example/postmortem", Type: "official-blog"}},
			Verification: incidentlib.Verification{Status: incidentlib.VerificationPartial, Against: "a faithful copy of the blog post", Note: "The duration is not stated."},
		},
		{
			ID: "IL-0003", Title: "A load balancer bug dropped long-lived connections", Company: "Demo Networks",
			Timeline:            incidentlib.Timeline{Started: ts("2019-12")},
			StatedTimeToResolve: 20 * time.Minute,
			Summary:             "A defect in the load balancer dropped connections older than an hour.",
			RootCause:           "software-bug",
			Components:          []string{"load-balancer"},
			Quotes: []incidentlib.Quote{{Text: "upstream connect error or disconnect/reset before headers", Kind: incidentlib.QuoteError, Source: "https://news.example.net/lb"},
				{Text: "503 Service Unavailable", Kind: incidentlib.QuoteStatus, Source: "https://news.example.net/lb"}},
			Sources:      []incidentlib.Source{{URL: "https://news.example.net/lb", Type: "news"}},
			Verification: incidentlib.Verification{Status: incidentlib.VerificationUnchecked},
		},
		{
			ID: "IL-0004", Title: "Escaping test " + hostileScript, Company: "Hostile" + hostileAttr,
			Timeline:     incidentlib.Timeline{Started: ts("2018")},
			Summary:      "Summary with " + hostileScript + " and " + hostileAttr + " retries.",
			Symptoms:     hostileAttr,
			Trigger:      hostileScript,
			Scope:        hostileAttr,
			Remediation:  []string{hostileScript},
			Lessons:      hostileAttr,
			Quotes:       []incidentlib.Quote{{Text: hostileScript, Kind: incidentlib.QuoteLog, Source: "javascript:alert(1)"}},
			Sources:      []incidentlib.Source{{URL: "javascript:alert(1)", Type: "news", Title: hostileScript}},
			Verification: incidentlib.Verification{Status: incidentlib.VerificationUnchecked, Note: hostileScript},
		},
	}
}

// testBaseURL keeps absolute links in golden files fixed.
const testBaseURL = "https://incidents.example"

func newFixtureHandler(t testing.TB) (*engine.Engine, http.Handler) {
	t.Helper()
	return fixtureHandlerOver(t, fixtureCases())
}

// handlerFor serves the fixture vocabulary and checks over cases of a
// test's own.
func handlerFor(t testing.TB, cases []*incidentlib.Case) http.Handler {
	t.Helper()
	_, h := fixtureHandlerOver(t, cases)
	return h
}

func fixtureHandlerOver(t testing.TB, cases []*incidentlib.Case) (*engine.Engine, http.Handler) {
	t.Helper()
	e, err := engine.Open(context.Background(), fixtureVocabulary(), cases, engine.Options{})
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	h, err := New(e, Config{BaseURL: testBaseURL, Checks: fixtureChecks()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e, h
}

// fixtureChecks is a small kubegap catalogue over the fixture vocabulary:
// one check cites two chosen cases, one cites one chosen case,
// one cites none and carries markup that must show as text.
func fixtureChecks() []incidentlib.Check {
	return []incidentlib.Check{
		{
			ID: "KG001", Title: "Retries without a brake", Severity: incidentlib.CheckHigh,
			Rule:    "A mesh route that retries must have outlier detection or a connection-pool limit.",
			Why:     "Retries multiply load on a struggling backend.\n\nWithout a brake, a small loss of capacity becomes an outage.",
			Fix:     "Add outlier detection to the DestinationRule of the route's host.",
			FixYAML: "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec:\n  trafficPolicy:\n    outlierDetection:\n      consecutive5xxErrors: 5\n",
			Guards: []incidentlib.TermRef{
				{Facet: incidentlib.FacetContributingFactor, Slug: "retry-amplification"},
				{Facet: incidentlib.FacetComponent, Slug: "in-memory-cache"},
			},
			Cases: []incidentlib.CheckCase{{ID: "IL-0001", Why: "checkout retries piled onto the cache"}, {ID: "IL-0002", Why: "retries kept the cache cold"}},
		},
		{
			ID: "KG002", Title: "Load balancer drains " + hostileScript, Severity: incidentlib.CheckMedium,
			Rule:    "Rule " + hostileAttr,
			Why:     "Why " + hostileScript,
			Fix:     "Fix " + hostileAttr,
			FixYAML: "metadata:\n  name: " + hostileScript + "\n",
			Guards:  []incidentlib.TermRef{{Facet: incidentlib.FacetComponent, Slug: "network"}},
			Cases:   []incidentlib.CheckCase{{ID: "IL-0003", Why: "the load balancer sent requests to stopped servers"}},
		},
		{
			ID: "KG003", Title: "Backups that were never restored", Severity: incidentlib.CheckLow,
			Rule:   "Every volume has a restore test.",
			Why:    "Data lost for good.",
			Fix:    "Restore a backup on a schedule.",
			Guards: []incidentlib.TermRef{{Facet: incidentlib.FacetSymptom, Slug: "data-loss"}},
		},
	}
}
