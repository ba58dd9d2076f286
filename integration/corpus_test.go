package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

const corpusDir = "testdata/corpus"

// corpusOutcome is what must become of one input; see testdata/corpus/corpus.yaml.
type corpusOutcome struct {
	Rejected  string   `json:"rejected,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	Published []string `json:"published,omitempty"`
	Targets   []string `json:"targets,omitempty"`
	Ignored   bool     `json:"ignored,omitempty"`
}

type corpusEntry struct {
	File     string         `json:"file"`
	Expect   corpusOutcome  `json:"expect"`
	Original *corpusOutcome `json:"original,omitempty"`
	Fork     *corpusOutcome `json:"fork,omitempty"`
}

// want is the entry's expectation on variant.
func (e corpusEntry) want(variant string) corpusOutcome {
	switch {
	case variant == testenv.VariantOriginal && e.Original != nil:
		return *e.Original
	case variant == testenv.VariantFork && e.Fork != nil:
		return *e.Fork
	}
	return e.Expect
}

type corpusInput struct {
	corpusEntry
	ingress *networkingv1.Ingress
}

// readCorpus reads the table and its inputs, and checks that they match one to one: a
// new file without an expectation, or an expectation without its file, fails.
func readCorpus(t *testing.T) []corpusInput {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "corpus.yaml"))
	require.NoError(t, err)
	var entries []corpusEntry
	require.NoError(t, yaml.UnmarshalStrict(data, &entries), "corpus.yaml")
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	require.NoError(t, err)
	var inputs []string
	for _, f := range files {
		if filepath.Base(f) != "corpus.yaml" {
			inputs = append(inputs, filepath.Base(f))
		}
	}
	listed := make([]string, 0, len(entries))
	for _, e := range entries {
		listed = append(listed, e.File)
	}
	require.ElementsMatch(t, inputs, listed, "every input file of %s has exactly one entry in corpus.yaml", corpusDir)

	known := reasons()
	out := make([]corpusInput, 0, len(entries))
	names := map[string]string{}
	for _, e := range entries {
		for _, o := range []*corpusOutcome{&e.Expect, e.Original, e.Fork} {
			if o == nil {
				continue
			}
			require.False(t, o.Rejected != "" && (o.Ignored || len(o.Warnings)+len(o.Published)+len(o.Targets) > 0), "%s: a rejected input has no other outcome", e.File)
			require.False(t, o.Ignored && len(o.Warnings)+len(o.Published)+len(o.Targets) > 0, "%s: an ignored input has no other outcome", e.File)
			require.False(t, len(o.Targets) > 0 && len(o.Published) != 1, "%s: targets are those of the one published host", e.File)
			for _, r := range o.Warnings {
				require.True(t, known[r], "%s: %s is not one of PIC's reasons (internal/pic)", e.File, r)
			}
		}
		raw, err := os.ReadFile(filepath.Join(corpusDir, e.File))
		require.NoError(t, err)
		var ing networkingv1.Ingress
		require.NoError(t, yaml.UnmarshalStrict(raw, &ing), e.File)
		require.Equal(t, "Ingress", ing.Kind, e.File)
		key := ing.Namespace + "/" + ing.Name
		require.Empty(t, names[key], "%s and %s both name Ingress %s", names[key], e.File, key)
		names[key] = e.File
		out = append(out, corpusInput{corpusEntry: e, ingress: &ing})
	}
	return out
}

// reasons are PIC's Warning reasons, for catching a typo in the table.
func reasons() map[string]bool {
	out := map[string]bool{}
	for _, r := range []string{
		pic.ReasonNoRules, pic.ReasonEmptyHost, pic.ReasonInvalidHost, pic.ReasonWildcardHost, pic.ReasonIPAddressHost,
		pic.ReasonLocalhostHost, pic.ReasonSingleLabelHost, pic.ReasonClusterInternalHost, pic.ReasonApexHost,
		pic.ReasonOverrideConflict, pic.ReasonInvalidAnnotation, pic.ReasonTunnelNotFound, pic.ReasonTunnelNamespaceUnsupported,
		pic.ReasonServiceNotFound, pic.ReasonServicePortNotFound, pic.ReasonResourceBackendUnsupported, pic.ReasonNoBackend,
		pic.ReasonDuplicatePath, pic.ReasonPathRoutingUnsupported, pic.ReasonNameConflict, pic.ReasonHostConflict,
		pic.ReasonAccessControlUnsupported, pic.ReasonTunnelNotAllowed, pic.ReasonPangolinError,
	} {
		out[r] = true
	}
	return out
}

// corpusObserved is what PIC did with one created input.
type corpusObserved struct {
	warnings  []string // distinct Warning reasons
	events    int      // events of any type
	published []string
	targets   []string
}

// TestCorpus creates every Ingress of testdata/corpus at once, beside valid Ingresses,
// and checks that each gets exactly its outcome from corpus.yaml: refused by the API
// server, or exactly its Warning reasons and its published hosts. PIC must not panic,
// must not fail reconciles over any input, and must keep serving the valid Ingresses.
func TestCorpus(t *testing.T) {
	inputs := readCorpus(t)
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		panicsBefore, errorsBefore := counter(t, "controller_runtime_reconcile_panics_total", nil), counter(t, "pic_reconcile_total", map[string]string{"result": "error"})
		w := start(t, env)
		variant := env.Variant.Name

		// Fixtures in every namespace the corpus uses. Namespaces named in a file are
		// fixed, so a second run (-count) finds them: they cannot be deleted in envtest.
		namespaces := []string{w.ns}
		for _, in := range inputs {
			if ns := in.ingress.Namespace; ns != "" && !slices.Contains(namespaces, ns) {
				namespaces = append(namespaces, ns)
			}
		}
		for _, ns := range namespaces {
			for _, obj := range []client.Object{
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
				&tunnelv1alpha1.PangolinTunnel{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}},
				withNamespace(serviceObject("web", 8080), ns),
				withNamespace(serviceObject("api", 9090), ns),
			} {
				if err := w.c.Create(w.ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
					require.NoError(t, err)
				}
			}
		}

		// Valid Ingresses beside the corpus: they must converge as if it were not there.
		valid := []*networkingv1.Ingress{
			ingressFor("valid-one", "pangolin", rule("valid-one.corpus.example.com", "/", "web", 8080)),
			ingressFor("valid-two-hosts", "pangolin", rule("valid-a.corpus.example.com", "/", "web", 8080), rule("valid-b.corpus.example.com", "/", "api", 9090)),
			ingressFor("valid-default-backend", "pangolin", rule("valid-default.corpus.example.com", "/", "api", 9090)),
		}
		valid[2].Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Name: "http"}}}
		validHosts := map[string][]string{
			"valid-one":             {"valid-one.corpus.example.com"},
			"valid-two-hosts":       {"valid-a.corpus.example.com", "valid-b.corpus.example.com"},
			"valid-default-backend": {"valid-default.corpus.example.com"},
		}

		// Everything at once, corpus and valid Ingresses interleaved, in table order
		// (host-conflict-first before host-conflict-second).
		created := map[string]*networkingv1.Ingress{}
		var mismatches []string
		mismatch := func(file, format string, args ...any) {
			mismatches = append(mismatches, file+": "+fmt.Sprintf(format, args...))
		}
		// Deleted at the end, so that their hosts are free for the next variant or run.
		// The namespaces of a fixed name keep what PIC created in them, which no garbage
		// collector removes here: that is deleted too, until PIC (still running) has
		// seen the Ingresses go and recreates nothing.
		var all []client.Object
		t.Cleanup(func() {
			for _, obj := range all {
				_ = w.c.Delete(w.ctx, obj)
			}
			assert.EventuallyWithT(t, func(c *assert.CollectT) {
				for _, ns := range namespaces[1:] {
					assert.NoError(c, w.c.DeleteAllOf(w.ctx, &tunnelv1alpha1.PangolinResource{}, client.InNamespace(ns)))
					var left tunnelv1alpha1.PangolinResourceList
					assert.NoError(c, w.c.List(w.ctx, &left, client.InNamespace(ns)))
					assert.Empty(c, left.Items)
				}
			}, wait, time.Second)
		})
		validAt := map[int]*networkingv1.Ingress{0: valid[0], len(inputs) / 2: valid[1], len(inputs) - 1: valid[2]}
		for i, in := range inputs {
			if v := validAt[i]; v != nil {
				w.create(v)
				all = append(all, v)
			}
			ing := in.ingress.DeepCopy()
			if ing.Namespace == "" {
				ing.Namespace = w.ns
			}
			want := in.want(variant)
			err := w.c.Create(w.ctx, ing)
			switch {
			case want.Rejected != "" && err == nil:
				mismatch(in.File, "the API server accepted it; want rejected with %q", want.Rejected)
				all = append(all, ing)
			case want.Rejected != "" && !strings.Contains(err.Error(), want.Rejected):
				mismatch(in.File, "rejected with %q; want an error containing %q", err, want.Rejected)
			case want.Rejected == "" && err != nil:
				mismatch(in.File, "the API server refused it (%v); want it accepted", err)
			case err == nil:
				created[in.File] = ing
				all = append(all, ing)
			}
		}

		observe := func(ing *networkingv1.Ingress) corpusObserved {
			var o corpusObserved
			var events eventsv1.EventList
			require.NoError(t, w.c.List(w.ctx, &events, client.InNamespace(ing.Namespace)))
			for _, e := range events.Items {
				if e.Regarding.Kind != "Ingress" || e.Regarding.UID != ing.UID {
					continue
				}
				o.events++
				if e.Type == corev1.EventTypeWarning && !slices.Contains(o.warnings, e.Reason) {
					o.warnings = append(o.warnings, e.Reason)
				}
			}
			var prs tunnelv1alpha1.PangolinResourceList
			require.NoError(t, w.c.List(w.ctx, &prs, client.InNamespace(ing.Namespace), client.MatchingLabels{pic.LabelOwnerUID: string(ing.UID)}))
			for _, r := range prs.Items {
				if r.Spec.HTTPConfig != nil {
					o.published = append(o.published, r.Spec.HTTPConfig.Subdomain+"."+r.Spec.HTTPConfig.DomainName)
				}
				o.targets = corpusTargets(r)
			}
			sort.Strings(o.warnings)
			sort.Strings(o.published)
			return o
		}
		// check compares one input with its expectation; final also refuses extra
		// warnings and events, which could still be on their way before.
		check := func(file string, ing *networkingv1.Ingress, want corpusOutcome, final bool) []string {
			got := observe(ing)
			var diffs []string
			wantWarnings := slices.Sorted(slices.Values(want.Warnings))
			wantPublished := slices.Sorted(slices.Values(want.Published))
			switch {
			case final && !slices.Equal(wantWarnings, got.warnings):
				diffs = append(diffs, fmt.Sprintf("Warning reasons %v, want exactly %v", got.warnings, wantWarnings))
			case !final && !isSubset(wantWarnings, got.warnings):
				diffs = append(diffs, fmt.Sprintf("Warning reasons %v, want %v", got.warnings, wantWarnings))
			}
			if !slices.Equal(wantPublished, got.published) {
				diffs = append(diffs, fmt.Sprintf("published %v, want %v", got.published, wantPublished))
			}
			if len(want.Targets) > 0 && !slices.Equal(want.Targets, got.targets) {
				diffs = append(diffs, fmt.Sprintf("targets %q, want %q", got.targets, want.Targets))
			}
			if final && want.Ignored && got.events > 0 {
				diffs = append(diffs, fmt.Sprintf("%d events on an Ingress PIC must ignore", got.events))
			}
			return diffs
		}
		checkAll := func(final bool) []string {
			var out []string
			for _, in := range inputs {
				if ing := created[in.File]; ing != nil {
					for _, d := range check(in.File, ing, in.want(variant), final) {
						out = append(out, in.File+": "+d)
					}
				}
			}
			for _, v := range valid {
				for _, d := range check(v.Name, v, corpusOutcome{Published: validHosts[v.Name]}, final) {
					out = append(out, "valid Ingress "+d)
				}
			}
			return out
		}

		// Wait for every outcome, a bounded wait whose timeout is collected rather than
		// failed: what has not converged by then is reported below. Then every event PIC
		// recorded by then, a second Warning included, is written before the final check.
		assert.Eventually(new(assert.CollectT), func() bool { return len(checkAll(false)) == 0 }, 2*wait, tick)
		w.eventuallyEventsWritten("events-marker")
		final := append(mismatches, checkAll(true)...)

		// PIC is still running and reconciling: a valid Ingress created after the corpus
		// is published.
		after := ingressFor("valid-after-corpus", "pangolin", rule("valid-after.corpus.example.com", "/", "web", 8080))
		w.create(after)
		all = append(all, after)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, []string{"valid-after.corpus.example.com"}, observe(after).published)
		}, wait, tick)

		panics := counter(t, "controller_runtime_reconcile_panics_total", nil) - panicsBefore
		reconcileErrors := counter(t, "pic_reconcile_total", map[string]string{"result": "error"}) - errorsBefore
		rejected, warned, ignored := 0, 0, 0
		for _, in := range inputs {
			switch want := in.want(variant); {
			case want.Rejected != "":
				rejected++
			case want.Ignored:
				ignored++
			case len(want.Warnings) > 0:
				warned++
			}
		}
		failed := map[string]bool{}
		for _, d := range final {
			failed[strings.SplitN(d, ":", 2)[0]] = true
		}
		t.Logf("corpus (%s): %d inputs: %d rejected by the API server, %d with Warnings, %d ignored, %d published without a Warning; "+
			"%d of %d outcomes matched; %d valid Ingresses converged beside them; %v reconcile panics, %v failed reconciles",
			variant, len(inputs), rejected, warned, ignored, len(inputs)-rejected-warned-ignored,
			len(inputs)-len(failed), len(inputs), len(valid)+1, panics, reconcileErrors)
		assert.Empty(t, final, "outcomes that differ from corpus.yaml")
		assert.Zero(t, panics, "reconciles that panicked")
		assert.Zero(t, reconcileErrors, "reconciles that failed: a malformed input must be a Warning, not an error retried forever")
	})
}

func withNamespace[T client.Object](obj T, ns string) T {
	obj.SetNamespace(ns)
	return obj
}

func isSubset(sub, of []string) bool {
	for _, s := range sub {
		if !slices.Contains(of, s) {
			return false
		}
	}
	return true
}

// corpusTargets renders a resource's targets as corpus.yaml spells them.
func corpusTargets(r tunnelv1alpha1.PangolinResource) []string {
	service := func(t tunnelv1alpha1.Target) string {
		return fmt.Sprintf("%s:%d", strings.TrimSuffix(t.IP, "."+r.Namespace+".svc.cluster.local"), t.Port)
	}
	if r.Spec.Target != nil {
		return []string{service(*r.Spec.Target)}
	}
	var out []string
	for _, t := range r.Spec.Targets {
		out = append(out, t.PathMatchType+" "+t.Path+" "+service(t))
	}
	return out
}

// counter sums a counter of the process's controller-runtime registry over the series
// whose labels include match.
func counter(t *testing.T, name string, match map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	m := testenv.Metrics{}
	for _, f := range families {
		m[f.GetName()] = f
	}
	return m.Sum(name, match)
}
