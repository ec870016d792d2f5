package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/incidentlib/incidentlib"
)

// FuzzSearchText sends arbitrary query text and paging through the whole
// search path. It must never panic, and every failure must be a domain
// error that names the parameter at fault.
func FuzzSearchText(f *testing.F) {
	e := open(f, fixture())
	for _, s := range []string{"", `"hedged retries"`, `"unbalanced`, "a:b* (c) [d] {e} ~f ^g +h -i", "caf\xe9", "the", `""""`} {
		f.Add(s, 1, 10)
	}
	f.Fuzz(func(t *testing.T, text string, page, perPage int) {
		res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: text, Page: page, PerPage: perPage})
		if err != nil {
			var de *incidentlib.Error
			if !errors.As(err, &de) || de.Param == "" || de.Message == "" {
				t.Fatalf("error %v is not a domain error naming a parameter", err)
			}
			return
		}
		if len(res.Hits) > res.PerPage || res.To > res.Total || (len(res.Hits) > 0 && res.To-res.From+1 != len(res.Hits)) {
			t.Fatalf("inconsistent page: %d hits, %d–%d of %d", len(res.Hits), res.From, res.To, res.Total)
		}
	})
}
