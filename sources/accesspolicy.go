package sources

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// Cache indexes on AccessPolicies, so that a policy's or a Secret's change reaches the
// objects it protects, and an object finds its policies, without listing them all.
const (
	policyTargetIndex = "pic.accesspolicy.target" // "namespace/Kind/name" of every targetRef
	policySecretIndex = "pic.accesspolicy.secret" // "namespace/name" of every referenced Secret
)

// PolicyKinds are what Policies reads and writes: AccessPolicies, whose status it
// writes, and the HTTPRoutes and Gateways they name. A source that protects its objects
// with AccessPolicies adds them to its own (plugin.SourceFactory.Kinds).
func PolicyKinds() plugin.Kinds {
	return plugin.Kinds{
		Scheme: func(s *runtime.Scheme) error { return errors.Join(accessv1alpha1.AddToScheme(s), gatewayv1.Install(s)) },
		Status: []client.Object{&accessv1alpha1.AccessPolicy{}},
		// The Secrets a policy references: render never prints their data, only
		// references to them.
		Read: []plugin.ReadKind{{Object: &accessv1alpha1.AccessPolicy{}}, {Object: &corev1.Secret{}}},
	}
}

// PolicyIndexes are the cache indexes Policies reads through; a source that protects its
// objects with AccessPolicies adds them to its own (plugin.SourceFactory.Indexes).
func PolicyIndexes() []plugin.Index {
	return []plugin.Index{
		{Object: &accessv1alpha1.AccessPolicy{}, Field: policyTargetIndex, Func: indexPolicyTargets},
		{Object: &accessv1alpha1.AccessPolicy{}, Field: policySecretIndex, Func: indexPolicySecrets},
	}
}

func indexPolicyTargets(obj client.Object) []string {
	p, ok := obj.(*accessv1alpha1.AccessPolicy)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(p.Spec.TargetRefs))
	for _, ref := range p.Spec.TargetRefs {
		keys = append(keys, targetKey(access.Target{Kind: string(ref.Kind), Namespace: p.Namespace, Name: string(ref.Name)}))
	}
	return keys
}

func indexPolicySecrets(obj client.Object) []string {
	p, ok := obj.(*accessv1alpha1.AccessPolicy)
	if !ok {
		return nil
	}
	var keys []string
	for _, name := range secretNames(p) {
		keys = append(keys, p.Namespace+"/"+name)
	}
	return keys
}

func targetKey(t access.Target) string { return t.Namespace + "/" + t.Kind + "/" + t.Name }

// secretNames are the Secrets a policy references, each once.
func secretNames(p *accessv1alpha1.AccessPolicy) []string {
	var names []string
	add := func(name string) {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if p.Spec.Password != nil {
		add(p.Spec.Password.SecretRef.Name)
	}
	if p.Spec.PinCode != nil {
		add(p.Spec.PinCode.SecretRef.Name)
	}
	if p.Spec.HeaderAuth != nil {
		add(p.Spec.HeaderAuth.SecretRef.Name)
	}
	return names
}

// Policies finds the AccessPolicy that protects an object, reads the Secrets it
// references, and merges it with the object's annotations (access.Resolve). It is off
// where the AccessPolicy CRD is not installed: then no object has a policy, and the
// annotations alone decide, as before policies existed.
type Policies struct {
	// client reads AccessPolicies from the cache.
	client client.Client
	// secrets reads a Secret's data from the API server, only when a policy references
	// it: PIC caches no Secret data, so its memory does not grow with the cluster's
	// Secrets.
	secrets client.Reader
	// live reads AccessPolicies from the API server, past the cache, to confirm a host's
	// first publish (confirmer), each read shared between first publishes; nil in
	// `render`, whose one client is the whole truth.
	live    *liveReads
	enabled bool
	// secretNamespaces are the only namespaces whose Secrets PIC may read
	// (config.SecretNamespaces); empty: every watched namespace.
	secretNamespaces []string
	// gatewayAPI: the cluster serves HTTPRoutes and Gateways, whose policies' status
	// follows them.
	gatewayAPI bool
	// mapper finds the AccessPolicy kind installed after PIC started (watchForCRD).
	mapper meta.RESTMapper
}

var _ plugin.SharedPart = (*Policies)(nil)

// policiesPart names Policies among the parts sources share (plugin.Shared).
const policiesPart = "AccessPolicy support"

// SharedPolicies returns the policies of the sources built with deps: one Policies for
// all of them, built by the first that asks, so that the status of AccessPolicies has
// one controller and the check for their CRD runs once (Declare). They are enabled
// when the cluster serves the AccessPolicy kind (always in `render`, which has no
// cluster to ask).
func SharedPolicies(ctx context.Context, deps plugin.SourceDeps) (*Policies, error) {
	return plugin.Share(deps.Shared, policiesPart, func() (*Policies, error) { return newPolicies(ctx, deps) })
}

func newPolicies(ctx context.Context, deps plugin.SourceDeps) (*Policies, error) {
	p := &Policies{client: deps.Client, secrets: deps.APIReader, enabled: true, gatewayAPI: true}
	if p.secrets == nil {
		p.secrets = deps.Client
	} else {
		p.live = newLiveReads(deps.APIReader)
	}
	if deps.Config != nil {
		p.secretNamespaces = deps.Config.SecretNamespaces
	}
	if deps.Mapper == nil {
		return p, nil
	}
	for _, kind := range []string{accessv1alpha1.KindHTTPRoute, accessv1alpha1.KindGateway} {
		gk := schema.GroupKind{Group: gatewayv1.GroupName, Kind: kind}
		if _, err := deps.Mapper.RESTMapping(gk, gatewayv1.GroupVersion.Version); err != nil {
			p.gatewayAPI = false
		}
	}
	gk := schema.GroupKind{Group: accessv1alpha1.GroupVersion.Group, Kind: accessv1alpha1.KindPolicy}
	_, err := deps.Mapper.RESTMapping(gk, accessv1alpha1.GroupVersion.Version)
	switch {
	case meta.IsNoMatchError(err):
		log.FromContext(ctx).Info("access policies are off: the AccessPolicy CRD is not installed", "crd", accessv1alpha1.AccessPolicyCRDName)
		p.enabled, p.mapper = false, deps.Mapper
		return p, nil
	case err != nil:
		return nil, fmt.Errorf("look up the %s kind: %w", accessv1alpha1.AccessPolicyCRDName, err)
	}
	// The CRD is installed: PIC must honour policies, so it must be able to hear their
	// Secrets change. Said now, rather than as a cache that never syncs.
	var probe metav1.PartialObjectMetadataList
	probe.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	opts := []client.ListOption{client.Limit(1)}
	switch {
	case len(p.secretNamespaces) > 0:
		opts = append(opts, client.InNamespace(p.secretNamespaces[0]))
	case len(deps.Config.WatchNamespaces) > 0:
		opts = append(opts, client.InNamespace(deps.Config.WatchNamespaces[0]))
	}
	if err := p.secrets.List(ctx, &probe, opts...); apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("the AccessPolicy CRD (%s) is installed, so PIC must read the Secrets policies reference, but it may not list Secrets: grant it get, list and watch on secrets (the chart's accessPolicies.enabled=true, or config/components/access-policies; docs/access-control.md), or, granted only in some namespaces, list them in secretNamespaces; or remove the CRD: %w",
			accessv1alpha1.AccessPolicyCRDName, err)
	}
	return p, nil
}

// Enabled reports whether AccessPolicies are read; a nil Policies reads none.
func (p *Policies) Enabled() bool { return p != nil && p.enabled }

// Protect replaces the access of each of res's routes with what its policy and the
// annotations give (access.Resolve). A route whose policy cannot be applied is dropped
// and rejected with Hold, so that it fails closed: a host not yet published is not
// published, one published keeps what the sink holds. gateways are the Gateways a host
// of the object is published through, for a policy attached there; nil for an Ingress.
// The cache may not have received yet a policy applied together with the object: res
// gets a Confirm that the core calls before a host's first write (confirmer).
func (p *Policies) Protect(ctx context.Context, res *plugin.Result, object access.Target, gateways func(host string) []access.Target) error {
	if !p.Enabled() || len(res.Routes) == 0 {
		return nil
	}
	policies, err := p.policiesOf(ctx, object)
	if err != nil {
		return err
	}
	// The hosts of a route share its Gateways and, most often, its policy: each
	// Gateway's policies, and each policy's Secrets, are read once.
	ofGateway := map[access.Target][]accessv1alpha1.AccessPolicy{}
	secretsOf := map[types.UID]access.Secrets{}
	routes := make([]route.Route, 0, len(res.Routes))
	seen := map[string]cachedPolicies{}
	for _, rt := range res.Routes {
		var gws []access.Target
		if gateways != nil {
			gws = gateways(rt.Host)
		}
		all := policies
		for _, gw := range gws {
			more, read := ofGateway[gw]
			if !read {
				if more, err = p.policiesOf(ctx, gw); err != nil {
					return err
				}
				ofGateway[gw] = more
			}
			all = append(slices.Clone(all), more...)
		}
		seen[rt.Host] = cachedPolicies{origin: rt.Origin, targets: append([]access.Target{object}, gws...), policies: all}
		attachment := access.Attach(all, object, gws)
		// A TCP or UDP port takes the policy's name alone (access.Resolve), which
		// unpublishes it: its Secrets are neither needed nor read, so that a policy
		// whose Secrets PIC may not read, or cannot read now, never holds a port open.
		if rj := p.secretsForbidden(attachment.Policy, rt); rj != nil && !rt.Raw() {
			res.Rejections = append(res.Rejections, *rj)
			continue
		}
		var secrets access.Secrets
		if attachment.Policy != nil && !rt.Raw() {
			var read bool
			if secrets, read = secretsOf[attachment.Policy.UID]; !read {
				if secrets, err = p.readSecrets(ctx, attachment.Policy); err != nil {
					return err
				}
				secretsOf[attachment.Policy.UID] = secrets
			}
		}
		protected, rejections, notices := access.Resolve(access.Input{Route: rt, Attachment: attachment, Secrets: secrets})
		res.Notices = AddNotice(res.Notices, notices...)
		if len(rejections) > 0 {
			res.Rejections = append(res.Rejections, rejections...)
			continue
		}
		rt.Access = protected
		routes = append(routes, rt)
	}
	res.Routes = routes
	if p.live != nil && len(routes) > 0 {
		res.Confirm = p.confirmer(seen)
	}
	return nil
}

// cachedPolicies are the policies the cache showed Protect for one host: those that
// target the host's object or one of the Gateways it is published through.
type cachedPolicies struct {
	origin   route.Origin
	targets  []access.Target
	policies []accessv1alpha1.AccessPolicy
}

// confirmer is a host's check before its first write (plugin.Result.Confirm): the
// AccessPolicies of the targets' namespaces are read from the API server, and a host is
// refused for now while one that targets its object or Gateway is missing from what
// the cache showed Protect. An AccessPolicy applied together with the object may
// reach PIC after it, and the host must not be published with the defaults meanwhile:
// with defaultSSO false, that would be a public window. The watch on AccessPolicies
// brings the object back once the cache has the policy; the retry covers a watch that
// lags further.
func (p *Policies) confirmer(seen map[string]cachedPolicies) func(context.Context, []string) ([]route.Rejection, error) {
	return func(ctx context.Context, hosts []string) ([]route.Rejection, error) {
		inNamespace := map[string][]accessv1alpha1.AccessPolicy{}
		var out []route.Rejection
		for _, host := range hosts {
			cached, ok := seen[host]
			if !ok {
				// A host Protect did not see under that name: every target and policy it
				// saw, rather than none.
				cached = mergedPolicies(seen)
			}
			for _, t := range cached.targets {
				live, read := inNamespace[t.Namespace]
				if !read {
					policies, err := p.live.policies(ctx, t.Namespace, cached.origin.Created)
					if err != nil {
						return nil, err
					}
					live, inNamespace[t.Namespace] = policies, policies
				}
				if missing := unseenPolicy(live, cached.policies, t); missing != nil {
					out = append(out, route.Rejection{
						Origin: cached.origin, Host: host, Reason: pic.ReasonAccessPolicyPending, Hold: true, Retry: true,
						Message: fmt.Sprintf("AccessPolicy %s targets %s, and PIC has not received it yet: %s is not published until it has", missing.Name, t, host),
					})
					break
				}
			}
		}
		return out, nil
	}
}

// mergedPolicies are the targets and policies of every host of seen, each once.
func mergedPolicies(seen map[string]cachedPolicies) cachedPolicies {
	var out cachedPolicies
	for _, host := range slices.Sorted(maps.Keys(seen)) {
		c := seen[host]
		out.origin = c.origin
		for _, t := range c.targets {
			if !slices.Contains(out.targets, t) {
				out.targets = append(out.targets, t)
			}
		}
		out.policies = append(out.policies, c.policies...)
	}
	return out
}

// unseenPolicy is a policy of live that targets t (as the target index reads a policy)
// and that cached does not hold, nil if none.
func unseenPolicy(live, cached []accessv1alpha1.AccessPolicy, t access.Target) *accessv1alpha1.AccessPolicy {
	key := targetKey(t)
	for i := range live {
		policy := &live[i]
		if policy.DeletionTimestamp != nil || !slices.Contains(indexPolicyTargets(policy), key) {
			continue
		}
		if !slices.ContainsFunc(cached, func(c accessv1alpha1.AccessPolicy) bool { return c.UID == policy.UID }) {
			return policy
		}
	}
	return nil
}

// Require keeps an object that names the AccessPolicy it requires
// (pic.AnnotationRequireAccessPolicy) from publishing anything new until that policy
// exists, targets the object and is the one that applies to it; what the object
// published stays as it is (Hold), with an AccessPolicyRequired Warning. A required
// policy that applies but is invalid is refused by Protect, host by host, which fails
// closed the same way. name is "" for an object that requires none. The watch on
// AccessPolicies brings the object back when the policy comes or changes. Sources call
// it before Protect: an object whose requirement is unmet has nothing to protect, and
// no other policy's Secrets are read for it.
func (p *Policies) Require(ctx context.Context, res *plugin.Result, object access.Target, name string) error {
	if name == "" || res.Origin == nil || !res.Managed {
		return nil
	}
	unmet, err := p.unmet(ctx, object, name)
	if err != nil {
		return err
	}
	RefuseUnprotected(res, object, name, unmet)
	return nil
}

// RefuseUnprotected is Require once Unmet has said why (unmet) the AccessPolicy named
// name does not protect object: nothing new is published for it, and what it
// published is held. It does nothing when unmet is "".
func RefuseUnprotected(res *plugin.Result, object access.Target, name, unmet string) {
	if unmet == "" || res.Origin == nil || !res.Managed {
		return
	}
	res.Routes = nil
	res.Confirm = nil
	res.MergedInto = nil // served through no other object's resource either
	res.Rejections = append(res.Rejections, route.Rejection{
		Origin: *res.Origin, Reason: pic.ReasonAccessPolicyRequired, Hold: true,
		Message: fmt.Sprintf("%s requires AccessPolicy %s (annotation %s), which %s: nothing new is published for it, and what it published stays as it is",
			object, name, pic.AnnotationRequireAccessPolicy, unmet),
	})
}

// Unmet says why the AccessPolicy named name, which object requires (annotation
// require-access-policy), does not protect it; "" when it does, or when name is ""
// (nothing required). A source that publishes an object's paths through another
// object's resource asks it first: paths that require a policy are never served
// without it.
func (p *Policies) Unmet(ctx context.Context, object access.Target, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	return p.unmet(ctx, object, name)
}

// unmet says why the policy named name does not protect object, "" when it does.
func (p *Policies) unmet(ctx context.Context, object access.Target, name string) (string, error) {
	switch {
	case object.Kind != accessv1alpha1.KindIngress && object.Kind != accessv1alpha1.KindHTTPRoute:
		return "cannot apply: no AccessPolicy can target a " + object.Kind, nil
	case !p.Enabled():
		return "cannot apply: the AccessPolicy CRD (" + accessv1alpha1.AccessPolicyCRDName + ") is not installed", nil
	}
	policies, err := p.policiesOf(ctx, object)
	if err != nil {
		return "", err
	}
	applies := access.Attach(policies, object, nil).Policy
	if applies != nil && applies.Name == name {
		return "", nil
	}
	var required accessv1alpha1.AccessPolicy
	err = p.client.Get(ctx, types.NamespacedName{Namespace: object.Namespace, Name: name}, &required)
	switch {
	case apierrors.IsNotFound(err):
		return "does not exist", nil
	case err != nil:
		return "", fmt.Errorf("get AccessPolicy %s/%s: %w", object.Namespace, name, err)
	case required.DeletionTimestamp != nil:
		return "is being deleted", nil
	case applies != nil:
		return fmt.Sprintf("does not apply to it: AccessPolicy %s, older, does", applies.Name), nil
	}
	return "does not target it (spec.targetRefs)", nil
}

// secretsForbidden refuses rt, held, when policy references Secrets in a namespace
// where PIC may not read them (secretNamespaces): PIC's RBAC grants none there, and a
// read would only be refused. nil when the Secrets can be read, or there are none.
func (p *Policies) secretsForbidden(policy *accessv1alpha1.AccessPolicy, rt route.Route) *route.Rejection {
	if policy == nil || p.secretsReadable(policy.Namespace) || len(secretNames(policy)) == 0 {
		return nil
	}
	return &route.Rejection{
		Origin: rt.Origin, Host: rt.Host, Reason: pic.ReasonAccessPolicySecretForbidden, Hold: true,
		Message: fmt.Sprintf("AccessPolicy %s/%s references Secrets (%s), and PIC may read Secrets only in namespaces %s (secretNamespaces): %s is not published, or keeps what it has; add %s to secretNamespaces and grant PIC its Secrets, or move the policy",
			policy.Namespace, policy.Name, strings.Join(secretNames(policy), ", "), strings.Join(p.secretNamespaces, ", "), rt.Host, policy.Namespace),
	}
}

// secretsReadable reports whether PIC may read the Secrets of namespace.
func (p *Policies) secretsReadable(namespace string) bool {
	return len(p.secretNamespaces) == 0 || slices.Contains(p.secretNamespaces, namespace)
}

// OwnPolicy names the policy attached to object itself (not to its Gateways), "" for
// none: objects that share a host must agree on it, or merging them would change the
// access control of one of them.
func (p *Policies) OwnPolicy(ctx context.Context, object access.Target) (string, error) {
	if !p.Enabled() {
		return "", nil
	}
	policies, err := p.policiesOf(ctx, object)
	if err != nil {
		return "", err
	}
	if a := access.Attach(policies, object, nil); a.Policy != nil {
		return a.Policy.Namespace + "/" + a.Policy.Name, nil
	}
	return "", nil
}

// policiesOf lists the policies that target t.
func (p *Policies) policiesOf(ctx context.Context, t access.Target) ([]accessv1alpha1.AccessPolicy, error) {
	var list accessv1alpha1.AccessPolicyList
	if err := p.client.List(ctx, &list, client.MatchingFields{policyTargetIndex: targetKey(t)}); err != nil {
		return nil, fmt.Errorf("list the AccessPolicies of %s: %w", t, err)
	}
	return list.Items, nil
}

// readSecrets reads the data of the Secrets policy references; a missing one is left
// out, for access.Resolve to refuse.
func (p *Policies) readSecrets(ctx context.Context, policy *accessv1alpha1.AccessPolicy) (access.Secrets, error) {
	out := access.Secrets{}
	if !p.secretsReadable(policy.Namespace) {
		// Refused by RBAC: its hosts say why (secretsForbidden); its status finds the
		// Secrets missing rather than retrying a read that cannot succeed.
		return out, nil
	}
	for _, name := range secretNames(policy) {
		var s corev1.Secret
		err := p.secrets.Get(ctx, types.NamespacedName{Namespace: policy.Namespace, Name: name}, &s)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("get Secret %s/%s of AccessPolicy %s: %w", policy.Namespace, name, policy.Name, err)
		}
		out[name] = s.Data
	}
	return out, nil
}

// secretMetadata is a Secret as the cache holds it for Policies: its metadata only,
// enough to hear it change.
func secretMetadata() client.Object {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// Watches bring back the objects an AccessPolicy targets when it changes (before and
// after: a target it drops is let go at once), and those of the policies that reference
// a Secret when the Secret changes. requests maps a target to the source's objects it
// concerns (a Gateway to its routes).
func (p *Policies) Watches(requests func(ctx context.Context, t access.Target) []reconcile.Request) []plugin.Watch {
	if !p.Enabled() {
		return nil
	}
	ofPolicy := func(ctx context.Context, policy *accessv1alpha1.AccessPolicy) []reconcile.Request {
		var out []reconcile.Request
		for _, ref := range policy.Spec.TargetRefs {
			out = append(out, requests(ctx, access.Target{Kind: string(ref.Kind), Namespace: policy.Namespace, Name: string(ref.Name)})...)
		}
		return out
	}
	return []plugin.Watch{
		{Object: &accessv1alpha1.AccessPolicy{}, IgnoreStatus: true, Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
			policy, ok := o.(*accessv1alpha1.AccessPolicy)
			if !ok {
				return nil
			}
			return ofPolicy(ctx, policy)
		}},
		{Object: secretMetadata(), Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
			var out []reconcile.Request
			for _, policy := range p.indexed(ctx, policySecretIndex, secretKey(o)) {
				out = append(out, ofPolicy(ctx, &policy)...)
			}
			return out
		}},
	}
}

// crdCheckPeriod is how often PIC, with access policies off, looks whether the
// AccessPolicy CRD was installed since it started: one discovery request each time.
const crdCheckPeriod = 30 * time.Second

// Declare implements plugin.SharedPart: what the core wires once for every source that
// protects its objects with AccessPolicies. Each source declares its own Watches.
func (p *Policies) Declare() plugin.SharedDeclaration {
	return plugin.SharedDeclaration{Controllers: p.statusController(), Runnables: p.runnables()}
}

// runnables are, with access policies off, a check that stops PIC when the AccessPolicy
// CRD appears: PIC reads policies only from its start, and a policy it ignored would
// leave its host with less protection than asked. Stopped, PIC is restarted by its
// Deployment and honours the policies (or, without the Secrets rules, says what to grant).
func (p *Policies) runnables() []manager.Runnable {
	if p == nil || p.enabled || p.mapper == nil {
		return nil
	}
	return []manager.Runnable{crdWatch{mapper: p.mapper, period: crdCheckPeriod}}
}

// crdWatch returns an error, which stops the manager, once the AccessPolicy kind is
// served.
type crdWatch struct {
	mapper meta.RESTMapper
	period time.Duration
}

// NeedLeaderElection: every replica must restart, the standby too.
func (crdWatch) NeedLeaderElection() bool { return false }

func (w crdWatch) Start(ctx context.Context) error {
	gk := schema.GroupKind{Group: accessv1alpha1.GroupVersion.Group, Kind: accessv1alpha1.KindPolicy}
	ticker := time.NewTicker(w.period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			if _, err := w.mapper.RESTMapping(gk, accessv1alpha1.GroupVersion.Version); err == nil {
				return fmt.Errorf("the AccessPolicy CRD (%s) was installed after PIC started: stopping, so that PIC restarts and honours access policies", accessv1alpha1.AccessPolicyCRDName)
			}
		}
	}
}

// statusControllerName is the name of the controller that writes AccessPolicies'
// status, in logs and metrics.
const statusControllerName = "accesspolicy"

// statusController writes each AccessPolicy's status.ancestors (access.Ancestors).
func (p *Policies) statusController() []plugin.Controller {
	if !p.Enabled() {
		return nil
	}
	// A policy's status follows its Secrets and its targets: a target created after
	// the policy is found, one deleted is lost.
	watches := []plugin.Watch{
		{Object: secretMetadata(), Requests: p.policiesBy(policySecretIndex, secretKey)},
		{Object: &networkingv1.Ingress{}, IgnoreStatus: true, Requests: p.policiesBy(policyTargetIndex, targetKeyOf(accessv1alpha1.KindIngress))},
	}
	if p.gatewayAPI {
		// The status of a route's policy follows the overrides on the route's Gateways:
		// their policies' changes (mode, targets, deletion), and the Gateways' own.
		ofGateway := p.policiesBy(policyTargetIndex, targetKeyOf(accessv1alpha1.KindGateway))
		watches = append(watches,
			plugin.Watch{Object: &gatewayv1.HTTPRoute{}, IgnoreStatus: true, Requests: p.policiesBy(policyTargetIndex, targetKeyOf(accessv1alpha1.KindHTTPRoute))},
			plugin.Watch{Object: &gatewayv1.Gateway{}, IgnoreStatus: true, Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
				gw := access.Target{Kind: accessv1alpha1.KindGateway, Namespace: o.GetNamespace(), Name: o.GetName()}
				own := p.indexed(ctx, policyTargetIndex, targetKey(gw))
				return append(ofGateway(ctx, o), p.routePoliciesUnder(ctx, gw, own)...)
			}},
			plugin.Watch{Object: &accessv1alpha1.AccessPolicy{}, IgnoreStatus: true, Requests: func(ctx context.Context, o client.Object) []reconcile.Request {
				policy, ok := o.(*accessv1alpha1.AccessPolicy)
				if !ok {
					return nil
				}
				var out []reconcile.Request
				for _, ref := range policy.Spec.TargetRefs {
					if string(ref.Kind) == accessv1alpha1.KindGateway {
						gw := access.Target{Kind: accessv1alpha1.KindGateway, Namespace: policy.Namespace, Name: string(ref.Name)}
						out = append(out, p.routePoliciesUnder(ctx, gw, []accessv1alpha1.AccessPolicy{*policy})...)
					}
				}
				return out
			}},
		)
	}
	return []plugin.Controller{{
		Name: statusControllerName, Object: &accessv1alpha1.AccessPolicy{}, IgnoreStatus: true,
		Reconciler: reconcile.Func(p.reconcileStatus), Watches: watches,
	}}
}

// targetKeyOf is the policyTargetIndex key of an object of kind.
func targetKeyOf(kind string) func(client.Object) string {
	return func(o client.Object) string {
		return targetKey(access.Target{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()})
	}
}

// policiesBy maps an object to the policies whose index holds its key.
func (p *Policies) policiesBy(index string, key func(client.Object) string) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		policies := p.indexed(ctx, index, key(o))
		out := make([]reconcile.Request, len(policies))
		for i := range policies {
			out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&policies[i])}
		}
		return out
	}
}

// indexed lists the policies whose index holds key, for a watch's map function: an
// error is logged, and maps to nothing.
func (p *Policies) indexed(ctx context.Context, index, key string) []accessv1alpha1.AccessPolicy {
	var list accessv1alpha1.AccessPolicyList
	if err := p.client.List(ctx, &list, client.MatchingFields{index: key}); err != nil {
		log.FromContext(ctx).Error(err, "cannot find the AccessPolicies of an object", "index", index, "key", key)
		return nil
	}
	return list.Items
}

// secretKey is the policySecretIndex key of a Secret.
func secretKey(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

func (p *Policies) reconcileStatus(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var policy accessv1alpha1.AccessPolicy
	if err := p.client.Get(ctx, req.NamespacedName, &policy); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var all accessv1alpha1.AccessPolicyList
	if err := p.client.List(ctx, &all, client.InNamespace(policy.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list the AccessPolicies of %s: %w", policy.Namespace, err)
	}
	secrets, err := p.readSecrets(ctx, &policy)
	if err != nil {
		return reconcile.Result{}, err
	}
	overrides := map[access.Target]*accessv1alpha1.AccessPolicy{}
	for _, ref := range policy.Spec.TargetRefs {
		t := access.Target{Kind: string(ref.Kind), Namespace: policy.Namespace, Name: string(ref.Name)}
		if overrides[t], err = p.overrideOf(ctx, t); err != nil {
			return reconcile.Result{}, err
		}
	}
	ancestors := access.Ancestors(&policy, all.Items, func(t access.Target) bool { return p.exists(ctx, t) },
		func(t access.Target) *accessv1alpha1.AccessPolicy { return overrides[t] }, access.Validate(&policy, secrets))
	for i := range ancestors {
		// Start from what was written for the same target, so that unchanged conditions
		// keep their transition time; SetStatusCondition stamps the others.
		var conditions []metav1.Condition
		for _, old := range policy.Status.Ancestors {
			if equality.Semantic.DeepEqual(old.AncestorRef, ancestors[i].AncestorRef) {
				conditions = slices.Clone(old.Conditions)
			}
		}
		for _, c := range ancestors[i].Conditions {
			meta.SetStatusCondition(&conditions, c)
		}
		ancestors[i].Conditions = conditions
	}
	if equality.Semantic.DeepEqual(ancestors, policy.Status.Ancestors) {
		return reconcile.Result{}, nil
	}
	policy.Status.Ancestors = ancestors
	if err := p.client.Status().Update(ctx, &policy); err != nil {
		return reconcile.Result{}, fmt.Errorf("update status of AccessPolicy %s: %w", req.NamespacedName, err)
	}
	return reconcile.Result{}, nil
}

// overrideOf is the policy of a Gateway that overrides the own policy of t, an
// HTTPRoute (access.Override), nil for none or another kind. The Gateways are those the
// route's parentRefs name and that exist: Protect has the Gateways PIC publishes the
// route through, which a listener that refuses the route leaves out, so that status can
// report Overridden where a route's own policy still applies; never the reverse.
func (p *Policies) overrideOf(ctx context.Context, t access.Target) (*accessv1alpha1.AccessPolicy, error) {
	if t.Kind != accessv1alpha1.KindHTTPRoute || !p.gatewayAPI {
		return nil, nil
	}
	var hr gatewayv1.HTTPRoute
	if err := p.client.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: t.Name}, &hr); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	var (
		gateways []access.Target
		policies []accessv1alpha1.AccessPolicy
	)
	for _, gw := range parentGateways(&hr) {
		if slices.Contains(gateways, gw) || !p.exists(ctx, gw) {
			continue
		}
		more, err := p.policiesOf(ctx, gw)
		if err != nil {
			return nil, err
		}
		gateways, policies = append(gateways, gw), append(policies, more...)
	}
	override, _ := access.Override(policies, gateways)
	return override, nil
}

// parentGateways are the Gateways an HTTPRoute's parentRefs name.
func parentGateways(hr *gatewayv1.HTTPRoute) []access.Target {
	var out []access.Target
	for _, ref := range hr.Spec.ParentRefs {
		if (ref.Group != nil && *ref.Group != gatewayv1.GroupName) || (ref.Kind != nil && *ref.Kind != accessv1alpha1.KindGateway) {
			continue
		}
		ns := hr.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		out = append(out, access.Target{Kind: accessv1alpha1.KindGateway, Namespace: ns, Name: string(ref.Name)})
	}
	return out
}

// routePoliciesUnder are the policies of the HTTPRoutes whose parentRefs name gw, when
// one of policies, on gw, is an override: their status follows its mode. It lists the
// HTTPRoutes of the cache, whose parent index belongs to the HTTPRoute source and may
// not exist; it runs only for a Gateway with an override, which a platform team
// changes seldom.
func (p *Policies) routePoliciesUnder(ctx context.Context, gw access.Target, policies []accessv1alpha1.AccessPolicy) []reconcile.Request {
	if !slices.ContainsFunc(policies, func(policy accessv1alpha1.AccessPolicy) bool { return policy.Spec.Mode == accessv1alpha1.ModeOverride }) {
		return nil
	}
	var routes gatewayv1.HTTPRouteList
	if err := p.client.List(ctx, &routes); err != nil {
		log.FromContext(ctx).Error(err, "cannot find the HTTPRoutes under a Gateway", "gateway", gw)
		return nil
	}
	var out []reconcile.Request
	for i := range routes.Items {
		if !slices.Contains(parentGateways(&routes.Items[i]), gw) {
			continue
		}
		key := targetKey(access.Target{Kind: accessv1alpha1.KindHTTPRoute, Namespace: routes.Items[i].Namespace, Name: routes.Items[i].Name})
		for _, policy := range p.indexed(ctx, policyTargetIndex, key) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&policy)})
		}
	}
	return out
}

// exists reports whether a policy's target exists. The kinds PIC does not serve
// (Gateway API not installed) count as absent.
func (p *Policies) exists(ctx context.Context, t access.Target) bool {
	key := types.NamespacedName{Namespace: t.Namespace, Name: t.Name}
	var obj client.Object
	switch t.Kind {
	case accessv1alpha1.KindIngress:
		obj = &networkingv1.Ingress{}
	case accessv1alpha1.KindHTTPRoute:
		obj = &gatewayv1.HTTPRoute{}
	case accessv1alpha1.KindGateway:
		obj = &gatewayv1.Gateway{}
	default:
		return false
	}
	return p.client.Get(ctx, key, obj) == nil
}
