package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var (
	database = route.Origin{Kind: "Service", Version: "v1", Namespace: "prod", Name: "db", UID: "uid-db", Created: time.Unix(100, 0)}
	postgres = route.Backend{Host: "db.prod.svc.cluster.local", Port: 5432, Scheme: "tcp"}
)

func raw(origin route.Origin, p route.Protocol, port int32, b route.Backend) route.Route {
	return route.Route{Origin: origin, Host: route.PortKey(p, port), Protocol: p, Port: port, Tunnel: tunnel, Paths: []route.PathRule{{Backend: b}}}
}

func TestDesiredRawResources(t *testing.T) {
	withRaw := Features{RawResources: true, PathRouting: true, AccessControl: true, TunnelNamespace: true}
	older := database
	older.Name, older.UID, older.Created = "old-db", "uid-old", time.Unix(50, 0)
	policy := raw(database, route.ProtocolTCP, 5432, postgres)
	policy.Access.Policy = &route.AccessPolicy{}
	sso := raw(database, route.ProtocolTCP, 5432, postgres)
	sso.Access.SSO = ptr.To(true)
	ssoOff := raw(database, route.ProtocolTCP, 5432, postgres)
	ssoOff.Access.SSO = ptr.To(false)

	cases := []struct {
		name     string
		route    route.Route
		features Features
		owners   map[string]route.Origin
		want     []Resource
		reasons  []string
	}{
		{
			name:     "a TCP port is one resource with one target, no domain and no access settings",
			route:    raw(database, route.ProtocolTCP, 5432, postgres),
			features: withRaw,
			want: []Resource{{
				Name: ResourceName(database, "tcp:5432"), Namespace: "prod", Origin: database, Host: "tcp:5432",
				Protocol: route.ProtocolTCP, ProxyPort: 5432, Tunnel: tunnel, Targets: []Target{{Backend: postgres}},
			}},
		},
		{
			name:     "a sink without raw resources refuses the port",
			route:    raw(database, route.ProtocolUDP, 53, postgres),
			features: fork,
			reasons:  []string{pic.ReasonRawResourceUnsupported},
		},
		{
			name:     "an older claim on the same port and protocol wins",
			route:    raw(database, route.ProtocolTCP, 5432, postgres),
			features: withRaw,
			owners:   map[string]route.Origin{"tcp:5432": older},
			reasons:  []string{pic.ReasonPortConflict},
		},
		{
			name:     "the same port over the other protocol is another claim",
			route:    raw(database, route.ProtocolUDP, 5432, postgres),
			features: withRaw,
			owners:   map[string]route.Origin{"tcp:5432": older},
			want: []Resource{{
				Name: ResourceName(database, "udp:5432"), Namespace: "prod", Origin: database, Host: "udp:5432",
				Protocol: route.ProtocolUDP, ProxyPort: 5432, Tunnel: tunnel, Targets: []Target{{Backend: postgres}},
			}},
		},
		{
			name:     "SSO asked on a port fails closed: Pangolin cannot protect it",
			route:    sso,
			features: withRaw,
			reasons:  []string{pic.ReasonAccessControlUnsupported},
		},
		{
			name:     "an AccessPolicy on a port fails closed",
			route:    policy,
			features: withRaw,
			reasons:  []string{pic.ReasonAccessControlUnsupported},
		},
		{
			name:     "SSO explicitly off is no protection asked",
			route:    ssoOff,
			features: withRaw,
			want: []Resource{{
				Name: ResourceName(database, "tcp:5432"), Namespace: "prod", Origin: database, Host: "tcp:5432",
				Protocol: route.ProtocolTCP, ProxyPort: 5432, Tunnel: tunnel, Targets: []Target{{Backend: postgres}},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rejections := Desired(Input{Routes: []route.Route{tc.route}, Features: tc.features, Defaults: Defaults{SSO: true}, Owners: tc.owners})
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.reasons, reasons(rejections))
			for _, rj := range rejections {
				assert.Equal(t, rj.Reason == pic.ReasonAccessControlUnsupported, rj.AccessUnsupported, "a port refused for the access it asks says so")
			}
		})
	}
}

func TestPortKey(t *testing.T) {
	assert.Equal(t, "tcp:5432", route.PortKey(route.ProtocolTCP, 5432))
	for key, want := range map[string]bool{"tcp:5432": true, "udp:1": true, "udp:65535": true, "tcp:0": false, "tcp:65536": false, "tcp:05432": false, "sctp:5432": false, "app.example.com": false, "tcp:": false} {
		_, _, ok := route.ParsePortKey(key)
		assert.Equal(t, want, ok, key)
	}
	resource := Resource{Host: "tcp:5432", Protocol: route.ProtocolTCP, ProxyPort: 5432}
	assert.Equal(t, "tcp:5432", resource.PublishedHost(), "a raw resource is known by its port key")
}
