package route_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

func TestPortKey(t *testing.T) {
	for _, tc := range []struct {
		key      string
		protocol route.Protocol
		port     int32
		ok       bool
	}{
		{key: "tcp:5432", protocol: route.ProtocolTCP, port: 5432, ok: true},
		{key: "udp:53", protocol: route.ProtocolUDP, port: 53, ok: true},
		{key: "udp:65535", protocol: route.ProtocolUDP, port: 65535, ok: true},
		{key: "app.example.com"},
		{key: "http:80"},
		{key: "tcp:0"},
		{key: "tcp:65536"},
		{key: "tcp:0080"},
		{key: "tcp:+80"},
		{key: "tcp:"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			protocol, port, ok := route.ParsePortKey(tc.key)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.protocol, protocol)
			assert.Equal(t, tc.port, port)
			if ok {
				assert.Equal(t, tc.key, route.PortKey(protocol, port), "a key reads back as written")
			}
		})
	}
}

func TestRawRoute(t *testing.T) {
	origin := route.Origin{Kind: "Service", Namespace: "data", Name: "db"}
	backend := route.Backend{Host: "db.data.svc.cluster.local", Port: 5432, Scheme: "tcp"}
	r := route.RawRoute(origin, route.ProtocolTCP, 15432, route.TunnelRef{Name: "site"}, backend, route.Access{})
	assert.Equal(t, "tcp:15432", r.Host, "a port is claimed under its key")
	assert.True(t, r.Raw())
	assert.Equal(t, int32(15432), r.Port)
	assert.Equal(t, []route.PathRule{{Backend: backend}}, r.Paths, "one backend, no path")
}

func TestRoutePortKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    route.Route
		want string
	}{
		{name: "a raw route claims its port key", r: route.RawRoute(route.Origin{}, route.ProtocolUDP, 53, route.TunnelRef{}, route.Backend{}, route.Access{}), want: "udp:53"},
		{name: "an HTTP route has no port key", r: route.Route{Host: "app.example.com"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.r.PortKey())
		})
	}
}
