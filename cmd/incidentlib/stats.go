package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/incidentlib/incidentlib"
)

func (m *Main) runStats(ctx context.Context, args []string) int {
	fs := newFlagSet("stats", m.Stderr)
	var cf corpusFlags
	cf.register(fs)
	missing := fs.String("missing", "", "list the IDs of the cases that do not know this field (a name from the FIELD table, e.g. time_to_resolve); for time_to_detect and time_to_resolve each line says what of the timeline the case's sources give")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var field incidentlib.CaseField
	if *missing != "" {
		f, ok := incidentlib.FindCaseField(*missing)
		if !ok {
			var names []string
			for _, f := range incidentlib.CaseFields {
				names = append(names, f.Name)
			}
			fmt.Fprintf(m.Stderr, "incidentlib stats: --missing %q is not a field; valid: %s\n", *missing, strings.Join(names, ", "))
			return exitUsage
		}
		field = f
	}
	log, _ := m.logger("error", "text")
	eng, code := m.openEngine(ctx, "stats", cf, "-", 0, log)
	if eng == nil {
		return code
	}
	defer eng.Close()
	if field.Known != nil {
		cases, err := eng.Cases(ctx)
		if err != nil {
			fmt.Fprintf(m.Stderr, "incidentlib stats: %v\n", err)
			return exitProblems
		}
		cases = slices.Clone(cases)
		slices.SortFunc(cases, func(a, b *incidentlib.Case) int { return strings.Compare(a.ID, b.ID) })
		n := 0
		reasons := map[string]int{}
		for _, c := range cases {
			if field.Known(c) {
				continue
			}
			n++
			if field.Why == nil {
				fmt.Fprintf(m.Stdout, "%s\t%s\t%s\n", c.ID, c.Company, c.Origin)
				continue
			}
			why := field.Why(c)
			fmt.Fprintf(m.Stdout, "%s\t%s\t%s\t%s\n", c.ID, c.Company, c.Origin, why)
			// The tally groups by the kind of gap, not by the time.
			kind, _, _ := strings.Cut(why, ";")
			reasons[kind]++
		}
		fmt.Fprintf(m.Stderr, "%d of %d cases do not know %s\n", n, len(cases), field.Name)
		kinds := make([]string, 0, len(reasons))
		for k := range reasons {
			kinds = append(kinds, k)
		}
		slices.SortFunc(kinds, func(a, b string) int { return reasons[b] - reasons[a] })
		for _, k := range kinds {
			fmt.Fprintf(m.Stderr, "  %d: %s\n", reasons[k], k)
		}
		return exitOK
	}
	st, err := eng.Stats(ctx)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib stats: %v\n", err)
		return exitProblems
	}
	writeStats(m.Stdout, eng.Vocabulary(), st)
	return exitOK
}

// writeStats prints what a curator needs to see the corpus's gaps: cases
// per term (terms used by fewer than two cases are flagged) and, per
// field, the share of cases where it is known.
func writeStats(out interface{ Write([]byte) (int, error) }, v *incidentlib.Vocabulary, st *incidentlib.Stats) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "%d cases\n", st.Cases)
	var ver []string
	for _, vc := range st.Verification {
		ver = append(ver, fmt.Sprintf("%s %d", vc.Value, vc.Count))
	}
	fmt.Fprintf(w, "verification: %s\n", strings.Join(ver, ", "))
	for _, f := range incidentlib.Facets {
		fmt.Fprintf(w, "\n%s\tcases\t\n", strings.ToUpper(f.Title()))
		for _, fc := range st.Terms[f] {
			flag := ""
			if fc.Count < 2 {
				flag = "← fewer than 2 cases"
			}
			fmt.Fprintf(w, "  %s\t%d\t%s\n", fc.Term.Slug, fc.Count, flag)
		}
	}
	fmt.Fprintf(w, "\nFIELD\tknown\tshare\n")
	for _, k := range st.Known {
		share := 0.0
		if st.Cases > 0 {
			share = 100 * float64(k.Known) / float64(st.Cases)
		}
		fmt.Fprintf(w, "  %s\t%d\t%.0f%%\n", k.Field, k.Known, share)
	}
	fmt.Fprintf(w, "\nYEAR\tcases\t\n")
	for _, y := range st.Years {
		fmt.Fprintf(w, "  %s\t%d\t\n", y.Value, y.Count)
	}
	w.Flush()
}
