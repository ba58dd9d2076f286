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

func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		policy Policy
		keys   []string
	}{
		{"a valid policy has no problem", Policy{{Namespaces: []string{"team-a", "*"}, NamespaceSelector: "tenant in (a,b)", Hosts: []string{"*.team-a.example.com", "shop.example.com"}}}, nil},
		{"a rule that selects no namespace is refused", Policy{{Hosts: []string{"shop.example.com"}}}, []string{"[0]"}},
		{"a rule without hosts is refused", Policy{{Namespaces: []string{"team-a"}}}, []string{"[0].hosts"}},
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
