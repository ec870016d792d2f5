package httpapi

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// Media types of the exports. JSON Lines has no registered type yet;
// application/x-ndjson is the one tools recognise.
const (
	mediaJSONL = "application/x-ndjson"
	mediaCSV   = "text/csv; charset=utf-8; header=present"
)

// listSep joins list values in a CSV cell; " | " reads well and rarely
// occurs in the text itself.
const listSep = " | "

// csvColumns are the export's columns, in order; the header row repeats
// them. They are part of the contract (docs/api.md lists them).
var csvColumns = []string{
	"id", "title", "company", "year",
	"started", "started_precision", "detected", "detected_precision",
	"mitigated", "mitigated_precision", "resolved", "resolved_precision",
	"time_to_detect_seconds", "time_to_resolve_seconds",
	"severity", "scope", "users_affected", "region",
	"root_cause", "components", "symptom_terms", "contributing_factors",
	"summary", "symptoms", "trigger", "detection", "remediation", "action_items", "lessons",
	"source_urls", "archived_urls", "verification_status", "verification_note",
	"url",
	// Added after the first release, so at the end: where no source
	// gives the start (started is empty), when the incident was made
	// public.
	"reported", "reported_precision",
}

// sortedCases returns every case by ID: a stable order, so that two
// exports diff cleanly.
func (a *api) sortedCases(r *http.Request) ([]*incidentlib.Case, error) {
	cs, err := a.lib.Cases(r.Context())
	if err != nil {
		return nil, err
	}
	cs = slices.Clone(cs)
	slices.SortFunc(cs, func(x, y *incidentlib.Case) int { return strings.Compare(x.ID, y.ID) })
	return cs, nil
}

func (a *api) exportHeaders(w http.ResponseWriter, media, filename string) {
	h := w.Header()
	h.Set("Content-Type", media)
	h.Set("Cache-Control", a.cache)
	h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
}

func (a *api) handleExportJSONL(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	cs, err := a.sortedCases(r)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one value per line: Encode ends each with \n
	enc.SetEscapeHTML(false)
	for _, c := range cs {
		if err := enc.Encode(a.fullCase(c)); err != nil {
			return err
		}
	}
	a.exportHeaders(w, mediaJSONL, "incidentlib-cases.jsonl")
	w.Write(buf.Bytes())
	return nil
}

func (a *api) handleExportCSV(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	cs, err := a.sortedCases(r)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write(csvColumns)
	for _, c := range cs {
		cw.Write(a.csvRow(c))
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	a.exportHeaders(w, mediaCSV, "incidentlib-cases.csv")
	w.Write(buf.Bytes())
	return nil
}

func (a *api) csvRow(c *incidentlib.Case) []string {
	ts := func(t incidentlib.Timestamp) (string, string) {
		if t.IsZero() {
			return "", ""
		}
		return t.String(), precisionName(t.Precision)
	}
	secs := func(d interface{ Seconds() float64 }, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatInt(int64(d.Seconds()), 10)
	}
	var srcs, archived, actions []string
	for _, s := range c.Sources {
		if s.URL != "" {
			srcs = append(srcs, s.URL)
		}
		if s.ArchivedURL != "" {
			archived = append(archived, s.ArchivedURL)
		}
	}
	for _, ai := range c.ActionItems {
		t := ai.Text
		if ai.Estimate != "" {
			t += " (estimated " + ai.Estimate + ")"
		}
		actions = append(actions, t)
	}
	st, stp := ts(c.Timeline.Started)
	de, dep := ts(c.Timeline.Detected)
	mi, mip := ts(c.Timeline.Mitigated)
	re, rep := ts(c.Timeline.Resolved)
	rp, rpp := ts(c.Timeline.Reported)
	ttd, okd := c.TimeToDetect()
	ttr, okr := c.TimeToResolve()
	year := ""
	if y := c.Year(); y != 0 {
		year = itoa(y)
	}
	status := c.Verification.Status
	if status == "" {
		status = incidentlib.VerificationUnchecked
	}
	row := []string{
		c.ID, c.Title, c.Company, year,
		st, stp, de, dep, mi, mip, re, rep,
		secs(ttd, okd), secs(ttr, okr),
		c.Severity, c.Scope, c.UsersAffected, c.Region,
		c.RootCause, strings.Join(c.Components, listSep), strings.Join(c.SymptomTerms, listSep), strings.Join(c.ContributingFactors, listSep),
		c.Summary, c.Symptoms, c.Trigger, c.Detection, strings.Join(c.Remediation, listSep), strings.Join(actions, listSep), c.Lessons,
		strings.Join(srcs, listSep), strings.Join(archived, listSep), status, c.Verification.Note,
		*a.links.caseLinks(c.ID).HTML,
		rp, rpp,
	}
	for i, cell := range row {
		row[i] = neutralizeFormula(cell)
	}
	return row
}

// neutralizeFormula keeps a spreadsheet from reading a cell as a formula:
// a cell that starts with =, +, -, @ (or a tab or carriage return before
// one) gets a leading apostrophe, which spreadsheets show as text. Case
// text is written by people, and a private case's by any team member.
func neutralizeFormula(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + cell
	}
	return cell
}
