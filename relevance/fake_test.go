package relevance_test

import (
	"context"

	"github.com/incidentlib/incidentlib"
)

// fakeLib answers every query with the same ranked IDs.
type fakeLib []string

func (f fakeLib) SearchCases(context.Context, incidentlib.Query) (*incidentlib.SearchResult, error) {
	res := &incidentlib.SearchResult{}
	for _, id := range f {
		res.Hits = append(res.Hits, incidentlib.Hit{Case: &incidentlib.Case{ID: id}})
	}
	return res, nil
}

func (fakeLib) Vocabulary() *incidentlib.Vocabulary { return nil }
func (fakeLib) FindCaseByID(context.Context, string) (*incidentlib.Case, error) {
	return nil, nil
}
func (fakeLib) SimilarCases(context.Context, string, int) ([]incidentlib.Related, error) {
	return nil, nil
}
func (fakeLib) FindTopic(context.Context, incidentlib.Facet, string, incidentlib.Query) (*incidentlib.Topic, error) {
	return nil, nil
}
func (fakeLib) Cases(context.Context) ([]*incidentlib.Case, error) { return nil, nil }
func (fakeLib) Stats(context.Context) (*incidentlib.Stats, error)  { return nil, nil }
