package web

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/incidentlib/incidentlib"
)

// The charts are drawn on the server as inline SVG: the page needs no
// chart library and no script, and each chart also has its numbers in a
// table for screen readers and for copying.

// chart is one SVG chart: bars, axis labels and optional markers, with
// every coordinate worked out here so the template only prints them.
type chart struct {
	ID      string
	Title   string
	Desc    string
	Width   int
	Height  int
	Bars    []bar
	Labels  []axisLabel
	Grid    []gridLine
	Markers []marker
	Table   []tableRow
	Head    [2]string
	// Narrow is the same chart laid out for a phone: horizontal bars with
	// their labels in full, drawn at the size it is shown, so its text
	// stays as large as the page's. The page shows one or the other.
	Narrow *chart
}

type bar struct {
	X, Y, W, H float64
	Value      int
	Label      string
	// Note follows the value ("median"), in the narrow layout.
	Note string
	// LabelAnchor is how the label aligns at LabelX: "end" (left of the
	// bar, the default) or "start" (over it).
	LabelAnchor string
	// ValueX, ValueY place the count by the bar.
	ValueX, ValueY float64
	LabelX, LabelY float64
}

type axisLabel struct {
	X, Y   float64
	Text   string
	Anchor string
}

type gridLine struct {
	X1, Y1, X2, Y2 float64
	Text           string
	TX, TY         float64
}

type marker struct {
	X, Y1, Y2 float64
	Text      string
	TX, TY    float64
	Anchor    string
	Class     string
}

type tableRow struct {
	Label string
	URL   string
	Value string
}

type chartsPage struct {
	Total    int
	PerYear  chart
	ByCause  chart
	Resolve  chart
	Known    int
	Median   string
	P90      string
	Longest  string
	Shortest string
}

// showChartsPage renders /charts.
func (s *server) showChartsPage(w http.ResponseWriter, r *http.Request) error {
	cases, err := s.lib.Cases(r.Context())
	if err != nil {
		return err
	}
	st, err := s.lib.Stats(r.Context())
	if err != nil {
		return err
	}
	cp := chartsPage{Total: len(cases)}
	cp.PerYear = perYearChart(cases)
	cp.ByCause = s.rootCauseChart(cases, st)
	var ds []time.Duration
	for _, c := range cases {
		if d, ok := c.TimeToResolve(); ok {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	cp.Known = len(ds)
	if len(ds) > 0 {
		med, p90 := quantile(ds, 0.5), quantile(ds, 0.9)
		cp.Median, cp.P90 = incidentlib.FormatDuration(med), incidentlib.FormatDuration(p90)
		cp.Shortest, cp.Longest = incidentlib.FormatDuration(ds[0]), incidentlib.FormatDuration(ds[len(ds)-1])
		cp.Resolve = resolveChart(ds, med, p90)
	}
	p := s.newPage(r, "Charts")
	p.Description = "Incidents in the library per year, by root cause, and how long they took to resolve."
	p.Canonical = s.baseURL(r) + "/charts"
	p.Nav = "charts"
	p.Content = cp
	return s.render(w, "charts", p)
}

// quantile interpolates linearly between the closest ranks of sorted
// durations, so the median of an even count is the mean of the middle two.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	frac := h - float64(lo)
	return sorted[lo] + time.Duration(math.Round(frac*float64(sorted[lo+1]-sorted[lo])))
}

// niceStep picks a grid step of 1, 2 or 5 times a power of ten that gives
// about four lines up to max.
func niceStep(max int) int {
	if max <= 4 {
		return 1
	}
	raw := float64(max) / 4
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return int(m * pow)
		}
	}
	return int(10 * pow)
}

func perYearChart(cases []*incidentlib.Case) chart {
	counts := map[int]int{}
	minY, maxY := 0, 0
	for _, c := range cases {
		y := c.Year()
		if y == 0 {
			continue
		}
		counts[y]++
		if minY == 0 || y < minY {
			minY = y
		}
		if y > maxY {
			maxY = y
		}
	}
	ch := chart{ID: "per-year", Title: "Cases per year", Width: 640, Height: 260, Head: [2]string{"Year", "Cases"}}
	if minY == 0 {
		ch.Desc = "No case has a known year."
		return ch
	}
	const left, right, top, bottom = 40.0, 10.0, 16.0, 40.0
	n := maxY - minY + 1
	maxC := 0
	for _, c := range counts {
		maxC = max(maxC, c)
	}
	step := niceStep(maxC)
	top2 := (maxC + step - 1) / step * step
	plotW, plotH := float64(ch.Width)-left-right, float64(ch.Height)-top-bottom
	slot := plotW / float64(n)
	labelEvery := 1
	for float64(labelEvery)*slot < 36 {
		labelEvery++
	}
	for v := 0; v <= top2; v += step {
		y := top + plotH - plotH*float64(v)/float64(top2)
		ch.Grid = append(ch.Grid, gridLine{X1: left, Y1: y, X2: left + plotW, Y2: y, Text: strconv.Itoa(v), TX: left - 6, TY: y + 4})
	}
	busiest, busiestN := 0, -1
	for i := 0; i < n; i++ {
		y := minY + i
		c := counts[y]
		h := plotH * float64(c) / float64(top2)
		x := left + slot*float64(i) + slot*0.15
		b := bar{X: x, Y: top + plotH - h, W: slot * 0.7, H: h, Value: c, Label: strconv.Itoa(y),
			ValueX: x + slot*0.35, ValueY: top + plotH - h - 4}
		if slot < minValueSlot {
			// Counts of neighbouring years would run into each other
			// ("1313"): the table and each bar's tooltip carry them.
			b.ValueX = 0
		}
		ch.Bars = append(ch.Bars, b)
		if i%labelEvery == 0 || i == n-1 {
			ch.Labels = append(ch.Labels, axisLabel{X: x + slot*0.35, Y: top + plotH + 18, Text: strconv.Itoa(y), Anchor: "middle"})
		}
		url := "/search?year_from=" + strconv.Itoa(y) + "&year_to=" + strconv.Itoa(y)
		ch.Table = append(ch.Table, tableRow{Label: strconv.Itoa(y), URL: url, Value: strconv.Itoa(c)})
		if c > busiestN {
			busiest, busiestN = y, c
		}
	}
	ch.Desc = "Bar chart of cases by the year each incident started, " + strconv.Itoa(minY) + " to " + strconv.Itoa(maxY) +
		". The busiest year is " + strconv.Itoa(busiest) + " with " + plural(busiestN, "case", "cases") + "."
	var rows []hrow
	for y := maxY; y >= minY; y-- {
		if counts[y] > 0 {
			rows = append(rows, hrow{label: strconv.Itoa(y), n: counts[y]})
		}
	}
	ch.Narrow = narrowChart(ch, rows, false)
	ch.Narrow.Desc = ch.Desc + " Years without a case are left out."
	return ch
}

// minValueSlot is the narrowest bar slot, in chart units, that still has
// room for its count above the bar.
const minValueSlot = 22.0

// hrow is one bar of a narrow chart.
type hrow struct {
	label string
	n     int
	note  string
}

// narrowWidth is the width of the phone layout, in chart units: about the
// width of a 390 px screen less the page's margins, so it is drawn at
// close to 1:1 and its 13 px text stays 13 px.
const narrowWidth = 350

// narrowChart lays rows out as horizontal bars for a phone. With
// labelAbove, each label has a line of its own over its bar (long names);
// otherwise it stands to the left (years).
func narrowChart(wide chart, rows []hrow, labelAbove bool) *chart {
	ch := &chart{ID: wide.ID + "-narrow", Title: wide.Title, Desc: wide.Desc, Width: narrowWidth}
	maxC := 1
	for _, r := range rows {
		maxC = max(maxC, r.n)
	}
	const right, barH = 90.0, 14.0
	longest := 0
	for _, r := range rows {
		longest = max(longest, len([]rune(r.label)))
	}
	left, rowH := 14+8.2*float64(longest), 22.0
	if labelAbove {
		left, rowH = 0, 38
	}
	plotW := float64(narrowWidth) - left - right
	for i, r := range rows {
		y := 4 + rowH*float64(i)
		barY := y + (rowH-barH)/2
		b := bar{Label: r.label, Value: r.n, Note: r.note, LabelX: left - 6, LabelY: barY + barH - 2, LabelAnchor: "end"}
		if labelAbove {
			barY = y + 18
			b.LabelX, b.LabelY, b.LabelAnchor = 0.1, y+13, "start" // a non-zero x marks the label as present
		}
		w := max(plotW*float64(r.n)/float64(maxC), 1)
		b.X, b.Y, b.W, b.H = left, barY, w, barH
		b.ValueX, b.ValueY = left+w+5, barY+barH-2
		ch.Bars = append(ch.Bars, b)
	}
	ch.Height = int(8 + rowH*float64(len(rows)))
	return ch
}

func (s *server) rootCauseChart(cases []*incidentlib.Case, st *incidentlib.Stats) chart {
	type row struct {
		label, url string
		n          int
	}
	var rows []row
	for _, fc := range st.Terms[incidentlib.FacetRootCause] {
		if fc.Count > 0 {
			l := s.term(incidentlib.FacetRootCause, fc.Term.Slug)
			rows = append(rows, row{l.Name, l.URL, fc.Count})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return b.n - a.n })
	undisclosed := 0
	for _, c := range cases {
		if c.RootCause == "" {
			undisclosed++
		}
	}
	if undisclosed > 0 {
		rows = append(rows, row{"Not disclosed", "", undisclosed})
	}
	const right, top, rowH = 40.0, 8.0, 24.0
	ch := chart{ID: "by-root-cause", Title: "Cases by root cause", Width: 640, Head: [2]string{"Root cause", "Cases"}}
	// The label column fits the longest name (12 px text averages under
	// 7 units a character), so none is clipped.
	longest := 0
	for _, r := range rows {
		longest = max(longest, len([]rune(r.label)))
	}
	left := min(16+7.8*float64(longest), 360)
	ch.Height = int(top*2 + rowH*float64(len(rows)))
	maxC := 1
	for _, r := range rows {
		maxC = max(maxC, r.n)
	}
	plotW := float64(ch.Width) - left - right
	for i, r := range rows {
		y := top + rowH*float64(i)
		w := plotW * float64(r.n) / float64(maxC)
		ch.Bars = append(ch.Bars, bar{X: left, Y: y + 4, W: w, H: rowH - 8, Value: r.n, Label: r.label,
			ValueX: left + w + 6, ValueY: y + rowH/2 + 4, LabelX: left - 8, LabelY: y + rowH/2 + 4, LabelAnchor: "end"})
		ch.Table = append(ch.Table, tableRow{Label: r.label, URL: r.url, Value: strconv.Itoa(r.n)})
	}
	ch.Desc = "Horizontal bar chart of cases per root cause, most common first."
	if len(rows) > 0 {
		ch.Desc += " The most common is " + rows[0].label + " with " + plural(rows[0].n, "case", "cases") + "."
	}
	narrow := make([]hrow, len(rows))
	for i, r := range rows {
		narrow[i] = hrow{label: r.label, n: r.n}
	}
	ch.Narrow = narrowChart(ch, narrow, true)
	return ch
}

// resolveBins are the buckets of the time-to-resolve histogram. Durations
// span minutes to weeks, so the buckets grow roughly geometrically.
var resolveBins = []struct {
	label  string
	lo, hi time.Duration
}{
	{"under 30m", time.Minute, 30 * time.Minute},
	{"30m–1h", 30 * time.Minute, time.Hour},
	{"1–2h", time.Hour, 2 * time.Hour},
	{"2–4h", 2 * time.Hour, 4 * time.Hour},
	{"4–8h", 4 * time.Hour, 8 * time.Hour},
	{"8–24h", 8 * time.Hour, 24 * time.Hour},
	{"1–3d", 24 * time.Hour, 72 * time.Hour},
	{"3–7d", 72 * time.Hour, 7 * 24 * time.Hour},
	{"7d and more", 7 * 24 * time.Hour, 60 * 24 * time.Hour},
}

func binOf(d time.Duration) int {
	for i, b := range resolveBins {
		if d < b.hi {
			return i
		}
	}
	return len(resolveBins) - 1
}

func resolveChart(ds []time.Duration, med, p90 time.Duration) chart {
	const left, right, top, bottom = 40.0, 10.0, 46.0, 40.0
	ch := chart{ID: "time-to-resolve", Title: "Time to resolve", Width: 640, Height: 280, Head: [2]string{"Time to resolve", "Cases"}}
	counts := make([]int, len(resolveBins))
	for _, d := range ds {
		counts[binOf(d)]++
	}
	maxC := 1
	for _, c := range counts {
		maxC = max(maxC, c)
	}
	step := niceStep(maxC)
	top2 := (maxC + step - 1) / step * step
	plotW, plotH := float64(ch.Width)-left-right, float64(ch.Height)-top-bottom
	slot := plotW / float64(len(resolveBins))
	for v := 0; v <= top2; v += step {
		y := top + plotH - plotH*float64(v)/float64(top2)
		ch.Grid = append(ch.Grid, gridLine{X1: left, Y1: y, X2: left + plotW, Y2: y, Text: strconv.Itoa(v), TX: left - 6, TY: y + 4})
	}
	for i, b := range resolveBins {
		h := plotH * float64(counts[i]) / float64(top2)
		x := left + slot*float64(i) + slot*0.08
		ch.Bars = append(ch.Bars, bar{X: x, Y: top + plotH - h, W: slot * 0.84, H: h, Value: counts[i], Label: b.label,
			ValueX: x + slot*0.42, ValueY: top + plotH - h - 4})
		ch.Labels = append(ch.Labels, axisLabel{X: x + slot*0.42, Y: top + plotH + 18, Text: b.label, Anchor: "middle"})
		ch.Table = append(ch.Table, tableRow{Label: b.label, Value: strconv.Itoa(counts[i])})
	}
	// A marker sits inside its bucket at the duration's place on a log
	// scale between the bucket's bounds.
	xOf := func(d time.Duration) float64 {
		i := binOf(d)
		b := resolveBins[i]
		f := (math.Log(float64(max(d, b.lo))) - math.Log(float64(b.lo))) / (math.Log(float64(b.hi)) - math.Log(float64(b.lo)))
		f = math.Min(math.Max(f, 0), 1)
		return left + slot*(float64(i)+f)
	}
	mx, px := xOf(med), xOf(p90)
	// Each marker's label stands on its own line above the plot, clear of
	// the bars' counts and of the other marker's line.
	ch.Markers = []marker{
		{X: mx, Y1: top - 16, Y2: top + plotH, Text: "median " + incidentlib.FormatDuration(med), TX: mx - 8, TY: top - 22, Anchor: "end", Class: "median"},
		{X: px, Y1: top - 2, Y2: top + plotH, Text: "90th percentile " + incidentlib.FormatDuration(p90), TX: px + 8, TY: top - 6, Anchor: "start", Class: "p90"},
	}
	if px > float64(ch.Width)-170 {
		ch.Markers[1].TX, ch.Markers[1].Anchor = px-8, "end"
	}
	if mx < left+110 {
		ch.Markers[0].TX, ch.Markers[0].Anchor = mx+8, "start"
	}
	// Counts above the bars stay below the markers' labels and clear of
	// their lines.
	for i := range ch.Bars {
		b := &ch.Bars[i]
		b.ValueY = max(b.ValueY, top+12)
		for _, m := range ch.Markers {
			if d := b.ValueX - m.X; math.Abs(d) < 14 {
				if d < 0 {
					b.ValueX = m.X - 14
				} else {
					b.ValueX = m.X + 14
				}
			}
		}
	}
	ch.Desc = "Histogram of the time from the start of each incident to its resolution, for the " + plural(len(ds), "case", "cases") +
		" where it is known. Median " + incidentlib.FormatDuration(med) + ", 90th percentile " + incidentlib.FormatDuration(p90) + "."
	rows := make([]hrow, len(resolveBins))
	for i, b := range resolveBins {
		rows[i] = hrow{label: b.label, n: counts[i]}
	}
	rows[binOf(med)].note = "median"
	if binOf(p90) == binOf(med) {
		rows[binOf(p90)].note = "median, p90"
	} else {
		rows[binOf(p90)].note = "p90"
	}
	ch.Narrow = narrowChart(ch, rows, false)
	return ch
}

func itoa(n int) string { return strconv.Itoa(n) }
