package engine

import (
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
)

// irregularVerbs are English verbs whose past forms the stemmer cannot
// bring to the base (withdrew, withdrawn → withdraw): base, past and past
// participle. A query word in any of these forms also matches the others,
// and with the base the stemmer's own family (withdrawal, withdrawing).
// This is the language's grammar, not a judgement of which words matter.
var irregularVerbs = []string{
	"withdraw withdrew withdrawn", "fall fell fallen", "break broke broken",
	"take took taken", "write wrote written", "overwrite overwrote overwritten",
	"rewrite rewrote rewritten", "run ran run", "rerun reran rerun", "begin began begun",
	"bring brought brought", "build built built", "rebuild rebuilt rebuilt",
	"buy bought bought", "catch caught caught", "choose chose chosen",
	"drive drove driven", "forget forgot forgotten", "freeze froze frozen",
	"give gave given", "grow grew grown", "hide hid hidden", "hold held held",
	"keep kept kept", "leave left left", "lose lost lost", "mean meant meant",
	"rise rose risen", "seek sought sought", "send sent sent", "resend resent resent",
	"shake shook shaken", "shrink shrank shrunk", "sink sank sunk", "speak spoke spoken",
	"spend spent spent", "steal stole stolen", "strike struck struck", "swing swung swung",
	"teach taught taught", "tear tore torn", "think thought thought", "throw threw thrown",
	"undo undid undone", "wake woke woken", "wear wore worn",
	"withhold withheld withheld", "feed fed fed", "bind bound bound", "blow blew blown",
	"draw drew drawn", "fly flew flown", "know knew known", "light lit lit",
	"slide slid slid", "stick stuck stuck", "sweep swept swept", "upset upset upset",
}

// verbForms maps the analyzed form of each irregular verb form to the
// analyzed forms of the verb's other forms.
func verbForms(a analysis.Analyzer) map[string][]string {
	out := map[string][]string{}
	for _, line := range irregularVerbs {
		var stems []string
		for _, w := range strings.Fields(line) {
			ts := analyzedTerms(a, w)
			if len(ts) != 1 {
				continue
			}
			dup := false
			for _, s := range stems {
				dup = dup || s == ts[0]
			}
			if !dup {
				stems = append(stems, ts[0])
			}
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s {
					out[s] = append(out[s], o)
				}
			}
		}
	}
	return out
}
