package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// Resource URIs.
const (
	incidentScheme   = "incident://"
	incidentTemplate = "incident://{id}"
	vocabularyURI    = "incidentlib://vocabulary"
	markdownMIME     = "text/markdown"
)

// addResources offers the vocabulary and every case as Markdown. Each case
// is listed on its own, so that clients which let a person attach resources
// show them by title; the template serves any case by ID as well.
func (h *handlers) addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{
		URI:         vocabularyURI,
		Name:        "vocabulary",
		Title:       "Incident Library vocabulary",
		Description: "Every root cause, component, symptom and contributing factor with its slug, definition and case count; the slugs the tools' filters take.",
		MIMEType:    markdownMIME,
	}, h.readVocabulary)

	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: incidentTemplate,
		Name:        "incident",
		Title:       "Incident case",
		Description: "A whole case as Markdown, by ID: incident://IL-0561.",
		MIMEType:    markdownMIME,
	}, h.readIncident)

	// The case list is read once: the library is fixed for the life of the
	// process. If it cannot be read the template still serves every case.
	cases, err := h.lib.Cases(context.Background())
	if err != nil {
		h.log.Error("mcp: listing cases as resources", "err", err)
		return
	}
	for _, c := range cases {
		s.AddResource(&mcp.Resource{
			URI:         incidentScheme + c.ID,
			Name:        c.ID,
			Title:       c.Title,
			Description: fmt.Sprintf("%s · %s", c.Company, caseDate(c)),
			MIMEType:    markdownMIME,
		}, h.readIncident)
	}
}

func (h *handlers) readIncident(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, incidentScheme)
	if !ok {
		return nil, resourceNotFound(uri, "case URIs are incident://IL-NNNN, e.g. incident://IL-0561")
	}
	c, err := h.findCase(ctx, id)
	if err != nil {
		if code := incidentlib.ErrorCode(err); code == incidentlib.ENOTFOUND || code == incidentlib.EINVALID {
			return nil, resourceNotFound(uri, incidentlib.ErrorMessage(err))
		}
		return nil, h.rpcErr(err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: uri, MIMEType: markdownMIME, Text: h.caseMarkdown(c),
	}}}, nil
}

func (h *handlers) readVocabulary(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	v, err := h.vocabulary(ctx, "", true)
	if err != nil {
		return nil, h.rpcErr(err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: req.Params.URI, MIMEType: markdownMIME, Text: "# Incident Library vocabulary\n\n" + renderVocab(v),
	}}}, nil
}

// resourceNotFound is the protocol's resource-not-found error (invalid
// params, since SEP-2164), with a message that says what would be found.
func resourceNotFound(uri, msg string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found: " + msg, Data: data}
}
