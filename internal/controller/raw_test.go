package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

var (
	httpHost = engine.Resource{Host: "app.example.com", Subdomain: "app", Domain: "example.com"}
	tcpPort  = engine.Resource{Host: "tcp:5432", Protocol: route.ProtocolTCP, ProxyPort: 5432}
)

// TestExposedMessage: a host is served at its URL; a TCP or UDP port, which has none,
// by its port key alone.
func TestExposedMessage(t *testing.T) {
	desc := plugin.Description{Kind: "PangolinResource", Name: "pic-x"}
	for _, c := range []struct {
		name     string
		existing engine.Existing
		want     string
	}{
		{"an HTTP host", engine.Existing{Resource: httpHost, Status: engine.Status{Phase: engine.PhaseReady, URL: "https://app.example.com"}},
			"app.example.com is served by Pangolin at https://app.example.com (PangolinResource pic-x)"},
		{"a TCP port", engine.Existing{Resource: tcpPort, Status: engine.Status{Phase: engine.PhaseReady}},
			"tcp:5432 is served by Pangolin (PangolinResource pic-x)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, exposedMessage(c.existing, desc))
		})
	}
}

// TestPublishedHostnamesOfPorts: a TCP or UDP port is published under its port key, as
// it is claimed; the source decides how to show it.
func TestPublishedHostnamesOfPorts(t *testing.T) {
	udpPort := engine.Resource{Host: "udp:53", Protocol: route.ProtocolUDP, ProxyPort: 53}
	got := publishedHostnames([]engine.Existing{
		{Resource: tcpPort, Status: engine.Status{Phase: engine.PhaseReady}},
		{Resource: udpPort, Status: engine.Status{Phase: engine.PhasePending}},
		{Resource: httpHost, Status: engine.Status{Phase: engine.PhaseReady, URL: "https://app.example.com"}},
	})
	assert.Equal(t, plugin.Hostnames{Served: []string{"tcp:5432", "app.example.com"}, Pending: []string{"udp:53"}}, got)
}
