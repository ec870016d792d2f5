package cluster

import (
	"context"
	"encoding/json"

	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// apiDiscovery finds which of the kinds kubegap reads the server offers,
// with plain reads of the discovery endpoints: /api and /apis, then the
// resource list of each group version kubegap understands that the server
// serves, and no other. client-go's discovery client would read the same,
// but it brings in client-go's typed scheme, whose package init registers
// every built-in API group each time kubegap starts, audit or not.
type apiDiscovery struct {
	client    *http.Client
	base      *url.URL // the server, with the path prefix of its URL
	userAgent string
}

// newAPIDiscovery makes a discovery reader with cfg's credentials,
// certificates and proxy.
func newAPIDiscovery(cfg *rest.Config) (*apiDiscovery, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, err
	}
	return &apiDiscovery{client: hc, base: base, userAgent: cfg.UserAgent}, nil
}

// groupDiscoveryFailed says which group versions could not be discovered
// (an aggregated API that is down) while the others were.
type groupDiscoveryFailed struct {
	Groups map[schema.GroupVersion]error
}

func (e *groupDiscoveryFailed) Error() string {
	var gvs []string
	for gv, err := range e.Groups {
		gvs = append(gvs, fmt.Sprintf("%s: %v", gv, err))
	}
	sort.Strings(gvs)
	return "unable to discover " + strings.Join(gvs, "; ")
}

// maxDiscoveryBytes bounds one discovery answer (the largest, /apis on a
// cluster with hundreds of CRDs, is well under a megabyte).
const maxDiscoveryBytes = 16 << 20

// ServerGroupsAndResourcesWithContext returns the resource lists of the
// group versions of Kinds() the server serves (the groups are not needed
// and come back nil). A group version whose list fails is named in a
// *groupDiscoveryFailed beside the lists that were read; any other error
// means the server could not be discovered at all.
func (d *apiDiscovery) ServerGroupsAndResourcesWithContext(ctx context.Context) ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	wanted := map[schema.GroupVersion]bool{}
	for _, k := range Kinds() {
		for _, v := range k.Versions {
			wanted[schema.GroupVersion{Group: k.Group, Version: v}] = true
		}
	}
	var core metav1.APIVersions
	if err := d.get(ctx, "/api", &core); err != nil {
		return nil, nil, err
	}
	var groups metav1.APIGroupList
	if err := d.get(ctx, "/apis", &groups); err != nil {
		return nil, nil, err
	}
	var served []schema.GroupVersion
	for _, v := range core.Versions {
		if gv := (schema.GroupVersion{Version: v}); wanted[gv] {
			served = append(served, gv)
		}
	}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			if gv := (schema.GroupVersion{Group: g.Name, Version: v.Version}); wanted[gv] {
				served = append(served, gv)
			}
		}
	}

	// A dozen small reads; in parallel, as client-go does, so that a
	// distant server costs one round trip rather than a dozen.
	lists := make([]*metav1.APIResourceList, len(served))
	errs := make([]error, len(served))
	var wg sync.WaitGroup
	for i, gv := range served {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/apis/" + gv.Group + "/" + gv.Version
			if gv.Group == "" {
				path = "/api/" + gv.Version
			}
			var l metav1.APIResourceList
			if errs[i] = d.get(ctx, path, &l); errs[i] == nil {
				l.GroupVersion = gv.String()
				lists[i] = &l
			}
		}()
	}
	wg.Wait()
	failed := &groupDiscoveryFailed{Groups: map[schema.GroupVersion]error{}}
	var out []*metav1.APIResourceList
	for i, gv := range served {
		if errs[i] != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			failed.Groups[gv] = errs[i]
			continue
		}
		out = append(out, lists[i])
	}
	if len(failed.Groups) > 0 {
		return nil, out, failed
	}
	return nil, out, nil
}

// get reads one discovery document into v. An answer other than 200 is an
// error carrying the server's own message when it sent a Status.
func (d *apiDiscovery) get(ctx context.Context, path string, v any) error {
	u := *d.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if d.userAgent != "" {
		req.Header.Set("User-Agent", d.userAgent)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxDiscoveryBytes)
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		data, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		if json.Unmarshal(data, &st) == nil && st.Message != "" {
			return fmt.Errorf("GET %s: %s (%d)", path, st.Message, resp.StatusCode)
		}
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: the answer is not discovery JSON: %v", path, err)
	}
	return nil
}
