package hostpolicy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		name          string
		pattern, host string
		want          bool
	}{
		{"an exact pattern matches its host", "shop.example.com", "shop.example.com", true},
		{"an exact pattern matches no other host", "shop.example.com", "www.shop.example.com", false},
		{"a wildcard matches one label before its domain", "*.team-a.example.com", "app.team-a.example.com", true},
		{"a wildcard matches several labels before its domain", "*.team-a.example.com", "api.v2.team-a.example.com", true},
		{"a wildcard does not match its domain itself", "*.team-a.example.com", "team-a.example.com", false},
		{"a wildcard does not match a lookalike domain", "*.team-a.example.com", "app.evil-team-a.example.com", false},
		{"a wildcard does not match a host that merely ends with its text", "*.team-a.example.com", "appteam-a.example.com", false},
		{"hosts compare lower-case", "Shop.Example.com", "shop.example.COM", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Match(tc.pattern, tc.host))
		})
	}
}

func TestAllows(t *testing.T) {
	policy := Policy{
		{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}},
		{NamespaceSelector: "tenant=shop", Hosts: []string{"shop.example.com", "*.shop.example.com"}},
		{Namespaces: []string{"*"}, Hosts: []string{"*.sandbox.example.com"}},
	}
	cases := []struct {
		name      string
		policy    Policy
		namespace string
		labels    map[string]string
		host      string
		want      bool
	}{
		{"without a policy every namespace may publish any host", nil, "anyone", nil, "app.example.com", true},
		{"a policy for ports alone leaves hosts free", Policy{{Namespaces: []string{"team-a"}, Ports: []string{"5432"}}}, "team-b", nil, "app.example.com", true},
		{"a namespace named by a rule may publish under its wildcard", policy, "team-a", nil, "app.team-a.example.com", true},
		{"a namespace named by a rule may not publish another tenant's host", policy, "team-a", nil, "shop.example.com", false},
		{"a namespace selected by its labels may publish its exact host", policy, "shop-prod", map[string]string{"tenant": "shop"}, "shop.example.com", true},
		{"a namespace selected by its labels may publish under its wildcard", policy, "shop-prod", map[string]string{"tenant": "shop"}, "api.shop.example.com", true},
		{"a namespace whose labels do not match is not selected", policy, "shop-prod", map[string]string{"tenant": "blog"}, "shop.example.com", false},
		{"every namespace may publish what the rule for all namespaces allows", policy, "team-b", nil, "x.sandbox.example.com", true},
		{"a namespace no rule selects for the host may publish nothing else", policy, "team-b", nil, "app.team-a.example.com", false},
		{"a host published through an override is judged as published", policy, "team-a", nil, "app.example.com", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, patterns := tc.policy.Allows(tc.namespace, tc.labels, tc.host)
			assert.Equal(t, tc.want, got)
			if !got {
				assert.NotEmpty(t, patterns, "a refusal says what the namespace may publish")
			}
		})
	}
	_, patterns := policy.Allows("team-a", nil, "shop.example.com")
	assert.Equal(t, []string{"*.team-a.example.com", "*.sandbox.example.com"}, patterns)
}

func TestAllowsPort(t *testing.T) {
	policy := Policy{
		{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}, Ports: []string{"45000-45099", "5432/tcp"}},
		{NamespaceSelector: "tenant=dns", Ports: []string{"53/udp"}},
		{Namespaces: []string{"team-b"}, Hosts: []string{"*.team-b.example.com"}},
	}
	hostsOnly := Policy{{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}}}
	cases := []struct {
		name      string
		policy    Policy
		namespace string
		labels    map[string]string
		protocol  string
		port      int32
		want      bool
	}{
		{"without a policy every namespace may publish any port", nil, "anyone", nil, "tcp", 5432, true},
		{"a policy for hosts alone leaves ports free", hostsOnly, "team-b", nil, "tcp", 5432, true},
		{"a port in a rule's range may be published, over either protocol", policy, "team-a", nil, "udp", 45000, true},
		{"the last port of a range is in it", policy, "team-a", nil, "tcp", 45099, true},
		{"a port past a range is not", policy, "team-a", nil, "tcp", 45100, false},
		{"a port for one protocol is not allowed over the other", policy, "team-a", nil, "udp", 5432, false},
		{"a namespace selected by its labels may publish its ports", policy, "dns-prod", map[string]string{"tenant": "dns"}, "udp", 53, true},
		{"once a rule lists ports, a namespace whose rules list none may publish none", policy, "team-b", nil, "tcp", 45000, false},
		{"a namespace no rule selects may publish no port", policy, "team-c", nil, "tcp", 45000, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := tc.policy.AllowsPort(tc.namespace, tc.labels, tc.protocol, tc.port)
			assert.Equal(t, tc.want, got)
		})
	}
	_, patterns := policy.AllowsPort("team-a", nil, "tcp", 22)
	assert.Equal(t, []string{"45000-45099", "5432/tcp"}, patterns, "a refusal says what the namespace may publish")
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		policy Policy
		keys   []string
	}{
		{"a valid policy has no problem", Policy{{Namespaces: []string{"team-a", "*"}, NamespaceSelector: "tenant in (a,b)", Hosts: []string{"*.team-a.example.com", "shop.example.com"}}}, nil},
		{"a rule that selects no namespace is refused", Policy{{Hosts: []string{"shop.example.com"}}}, []string{"[0]"}},
		{"a rule without hosts or ports is refused", Policy{{Namespaces: []string{"team-a"}}}, []string{"[0].hosts"}},
		{"a rule with ports alone is valid", Policy{{Namespaces: []string{"team-a"}, Ports: []string{"5432", "5432/tcp", "45000-45999", "53/udp"}}}, nil},
		{"a port out of range is refused", Policy{{Namespaces: []string{"a"}, Ports: []string{"0", "65536", "80"}}}, []string{"[0].ports[0]", "[0].ports[1]"}},
		{"a reversed range is refused", Policy{{Namespaces: []string{"a"}, Ports: []string{"6000-5000"}}}, []string{"[0].ports[0]"}},
		{"an unknown protocol is refused", Policy{{Namespaces: []string{"a"}, Ports: []string{"5432/sctp", "5432/TCP"}}}, []string{"[0].ports[0]", "[0].ports[1]"}},
		{"a port not written as a plain number is refused", Policy{{Namespaces: []string{"a"}, Ports: []string{"05432", "+80", "80-", "*"}}}, []string{"[0].ports[0]", "[0].ports[1]", "[0].ports[2]", "[0].ports[3]"}},
		{"an invalid namespace name is refused", Policy{{Namespaces: []string{"Team_A"}, Hosts: []string{"a.example.com"}}}, []string{"[0].namespaces[0]"}},
		{"an invalid selector is refused", Policy{{NamespaceSelector: "tenant in (", Hosts: []string{"a.example.com"}}}, []string{"[0].namespaceSelector"}},
		{"a wildcard over a top-level domain is refused", Policy{{Namespaces: []string{"a"}, Hosts: []string{"*.com"}}}, []string{"[0].hosts[0]"}},
		{"a wildcard in the middle is refused", Policy{{Namespaces: []string{"a"}, Hosts: []string{"app.*.example.com"}}}, []string{"[0].hosts[0]"}},
		{"a pattern not written as PIC compares hosts is refused", Policy{{Namespaces: []string{"a"}, Hosts: []string{"Shop.Example.com"}}}, []string{"[0].hosts[0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var keys []string
			for _, p := range tc.policy.Check() {
				keys = append(keys, p.Key)
				assert.NotEmpty(t, p.Message)
			}
			assert.Equal(t, tc.keys, keys)
		})
	}
}
