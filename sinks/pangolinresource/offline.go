package pangolinresource

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// crdVariants are the operator CRD variants the sink writes for offline, by name.
var crdVariants = map[string]tunnelv1alpha1.Capabilities{
	"fork":     tunnelv1alpha1.ForkCapabilities,
	"original": tunnelv1alpha1.OriginalCapabilities,
}

// offline builds the sink for `manager render`: it writes into render's fake cluster,
// for the CRD variant render is told.
func offline(_ context.Context, deps plugin.OfflineDeps) (plugin.OfflineSink, error) {
	opts := deps.Options
	if opts.DomainsGiven {
		return nil, fmt.Errorf("%w: --domain is for sink pangolin (direct mode): PangolinResources carry no org domains", plugin.ErrBadOption)
	}
	caps, ok := crdVariants[opts.CRDVariant]
	if !ok {
		return nil, fmt.Errorf("%w: --crd-variant %q: want fork or original", plugin.ErrBadOption, opts.CRDVariant)
	}
	reader := client.Reader(deps.Client)
	if opts.AssumeTunnels {
		reader = assumedTunnels{deps.Client}
	}
	return &offlineSink{Sink: New(deps.Client, deps.Client, caps), reader: reader, client: deps.Client}, nil
}

// offlineSink is the sink over render's fake cluster, which counts the writes.
type offlineSink struct {
	*Sink
	reader client.Reader
	client client.Client
}

// Tunnel reads tunnels through the reader render's options call for.
func (o *offlineSink) Tunnel(ctx context.Context, ref route.TunnelRef) (plugin.TunnelCheck, error) {
	return tunnelCheck(ctx, o.reader, ref)
}

// Writes implements plugin.OfflineSink: every write is in render's fake cluster.
func (o *offlineSink) Writes() int { return 0 }

// Published implements plugin.OfflineSink: PIC's PangolinResources, as they would be
// written (no status, no server-set metadata), sorted by namespace and name.
func (o *offlineSink) Published(ctx context.Context) ([]any, error) {
	var list tunnelv1alpha1.PangolinResourceList
	if err := o.client.List(ctx, &list, client.MatchingLabelsSelector{Selector: CacheSelector()}); err != nil {
		return nil, fmt.Errorf("list PangolinResources: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b tunnelv1alpha1.PangolinResource) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	out := make([]any, 0, len(list.Items))
	for i := range list.Items {
		r := list.Items[i].DeepCopy()
		r.TypeMeta = metav1.TypeMeta{APIVersion: tunnelv1alpha1.GroupVersion.String(), Kind: "PangolinResource"}
		r.ResourceVersion, r.UID, r.Generation, r.CreationTimestamp, r.ManagedFields = "", "", 0, metav1.Time{}, nil
		data, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("marshal PangolinResource %s/%s: %w", r.Namespace, r.Name, err)
		}
		var fields map[string]any
		if err := json.Unmarshal(data, &fields); err != nil {
			return nil, fmt.Errorf("marshal PangolinResource %s/%s: %w", r.Namespace, r.Name, err)
		}
		delete(fields, "status")
		out = append(out, fields)
	}
	return out, nil
}

// assumedTunnels reads through c, except that a PangolinTunnel c does not hold exists
// and is Ready: render's input then need not carry the tunnels.
type assumedTunnels struct{ c client.Client }

func (a assumedTunnels) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := a.c.Get(ctx, key, obj, opts...)
	if t, ok := obj.(*tunnelv1alpha1.PangolinTunnel); ok && apierrors.IsNotFound(err) {
		*t = tunnelv1alpha1.PangolinTunnel{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Status:     tunnelv1alpha1.PangolinTunnelStatus{Status: tunnelv1alpha1.StatusReady},
		}
		return nil
	}
	return err
}

func (a assumedTunnels) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return a.c.List(ctx, list, opts...)
}
