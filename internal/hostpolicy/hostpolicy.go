// Package hostpolicy decides which public hosts and ports a namespace may publish, from
// the configuration's hostPolicy section: a multi-tenant cluster's answer to "may tenant
// A publish shop.example.com, or TCP port 5432?". It is pure: the namespace's labels are
// the caller's to read, and it never reads Kubernetes itself.
package hostpolicy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
)

// Rule lets the namespaces it selects publish the hosts its patterns match. It selects
// a namespace named in Namespaces ("*" names every namespace, as a tunnel's
// allowedNamespaces does), or whose labels match NamespaceSelector (a label selector as
// kubectl -l takes it: "tenant=shop,tier in (web,api)"; "" selects none by labels).
type Rule struct {
	Namespaces        []string `mapstructure:"namespaces" yaml:"namespaces,omitempty"`
	NamespaceSelector string   `mapstructure:"namespaceSelector" yaml:"namespaceSelector,omitempty"`
	// Hosts are exact hosts (shop.example.com) or wildcards (*.team-a.example.com: any
	// host with one label or more before .team-a.example.com, not team-a.example.com
	// itself, as a Gateway listener's wildcard hostname).
	Hosts []string `mapstructure:"hosts" yaml:"hosts,omitempty"`
	// Ports are the public TCP and UDP ports the namespaces may publish (Services of
	// type LoadBalancer, TCPRoutes, UDPRoutes): "5432" (TCP or UDP), "5432/tcp", or a
	// range, "45000-45999" or "45000-45999/udp".
	Ports []string `mapstructure:"ports" yaml:"ports,omitempty"`
}

// Policy is the hostPolicy section. Empty, it is off: every namespace may publish any
// host and any port. Hosts are restricted once a rule lists hosts (RestrictsHosts): a
// namespace may then publish a host only when a rule that selects it has a pattern
// matching the host, and a namespace no such rule selects may publish none. Ports are
// restricted the same way once a rule lists ports (RestrictsPorts). A policy written
// for hosts alone leaves ports to the tunnels' allowedNamespaces, and one written for
// ports alone leaves hosts free.
type Policy []Rule

// Enabled reports whether the policy restricts anything.
func (p Policy) Enabled() bool { return len(p) > 0 }

// RestrictsHosts reports whether the policy decides hosts: some rule lists hosts.
func (p Policy) RestrictsHosts() bool {
	return slices.ContainsFunc(p, func(r Rule) bool { return len(r.Hosts) > 0 })
}

// NeedsLabels reports whether deciding needs the namespaces' labels: some rule selects
// namespaces by labels.
func (p Policy) NeedsLabels() bool {
	return slices.ContainsFunc(p, func(r Rule) bool { return strings.TrimSpace(r.NamespaceSelector) != "" })
}

// Allows reports whether namespace, whose labels are nsLabels, may publish host (a
// normalized, published host: after the domain-name and subdomain overrides), and the
// patterns it may publish, for a refusal's message. A rule whose selector does not
// parse selects nothing: the configuration refuses such a rule (Check) before PIC
// starts.
func (p Policy) Allows(namespace string, nsLabels map[string]string, host string) (allowed bool, patterns []string) {
	if !p.RestrictsHosts() {
		return true, nil
	}
	for _, r := range p {
		if !r.selects(namespace, nsLabels) {
			continue
		}
		for _, pattern := range r.Hosts {
			if Match(pattern, host) {
				return true, nil
			}
			if !slices.Contains(patterns, pattern) {
				patterns = append(patterns, pattern)
			}
		}
	}
	return false, patterns
}

// RestrictsPorts reports whether the policy decides ports too: some rule lists ports.
func (p Policy) RestrictsPorts() bool {
	return slices.ContainsFunc(p, func(r Rule) bool { return len(r.Ports) > 0 })
}

// AllowsPort reports whether namespace, whose labels are nsLabels, may publish port
// over protocol ("tcp" or "udp"), and the port patterns it may publish, for a refusal's
// message.
func (p Policy) AllowsPort(namespace string, nsLabels map[string]string, protocol string, port int32) (allowed bool, patterns []string) {
	if !p.RestrictsPorts() {
		return true, nil
	}
	for _, r := range p {
		if !r.selects(namespace, nsLabels) {
			continue
		}
		for _, pattern := range r.Ports {
			if pr, ok := parsePortRange(pattern); ok && pr.matches(protocol, port) {
				return true, nil
			}
			if !slices.Contains(patterns, pattern) {
				patterns = append(patterns, pattern)
			}
		}
	}
	return false, patterns
}

// portRange is a port pattern read: first to last, over protocol ("" for both).
type portRange struct {
	first, last int
	protocol    string
}

func (pr portRange) matches(protocol string, port int32) bool {
	return (pr.protocol == "" || pr.protocol == protocol) && int(port) >= pr.first && int(port) <= pr.last
}

// parsePortRange reads "5432", "5432/tcp", "45000-45999" or "45000-45999/udp".
func parsePortRange(pattern string) (portRange, bool) {
	numbers, protocol, _ := strings.Cut(pattern, "/")
	if protocol != "" && protocol != "tcp" && protocol != "udp" {
		return portRange{}, false
	}
	firstText, lastText, isRange := strings.Cut(numbers, "-")
	if !isRange {
		lastText = firstText
	}
	first, okFirst := portNumber(firstText)
	last, okLast := portNumber(lastText)
	if !okFirst || !okLast || last < first {
		return portRange{}, false
	}
	return portRange{first: first, last: last, protocol: protocol}, true
}

// portNumber reads a port, 1 to 65535, written without sign or leading zero.
func portNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == s
}

func (r Rule) selects(namespace string, nsLabels map[string]string) bool {
	if slices.Contains(r.Namespaces, namespace) || slices.Contains(r.Namespaces, "*") {
		return true
	}
	if strings.TrimSpace(r.NamespaceSelector) == "" {
		return false
	}
	sel, err := labels.Parse(r.NamespaceSelector)
	return err == nil && sel.Matches(labels.Set(nsLabels))
}

// Match reports whether host matches pattern: equal to it, or, for *.suffix, ending in
// .suffix with at least one label before it. Both are compared lower-case.
func Match(pattern, host string) bool {
	pattern, host = strings.ToLower(pattern), strings.ToLower(host)
	if suffix, wildcard := strings.CutPrefix(pattern, "*."); wildcard {
		rest, ok := strings.CutSuffix(host, "."+suffix)
		return ok && rest != ""
	}
	return pattern == host
}

// Check returns what is wrong with each rule, as key suffixes ("[0].hosts[1]") and
// messages that say what is wanted.
func (p Policy) Check() []Problem {
	var out []Problem
	for i, r := range p {
		at := fmt.Sprintf("[%d]", i)
		if len(r.Namespaces) == 0 && strings.TrimSpace(r.NamespaceSelector) == "" {
			out = append(out, Problem{at, "the rule selects no namespace: set namespaces (a list of names) or namespaceSelector (a label selector such as tenant=shop)"})
		}
		for j, ns := range r.Namespaces {
			if ns != "*" && !isNamespace(ns) {
				out = append(out, Problem{fmt.Sprintf("%s.namespaces[%d]", at, j), fmt.Sprintf("%q is not a namespace name: want lowercase letters, digits and '-', at most 63 characters, or \"*\" for every namespace", ns)})
			}
		}
		if _, err := labels.Parse(r.NamespaceSelector); err != nil {
			out = append(out, Problem{at + ".namespaceSelector", fmt.Sprintf("%q is not a label selector (%v): want one such as tenant=shop or tier in (web,api)", r.NamespaceSelector, err)})
		}
		if len(r.Hosts) == 0 && len(r.Ports) == 0 {
			out = append(out, Problem{at + ".hosts", "the rule allows no host and no port: list the hosts its namespaces may publish, such as shop.example.com or *.team-a.example.com, or the ports under ports"})
		}
		for j, h := range r.Hosts {
			if msg := checkPattern(h); msg != "" {
				out = append(out, Problem{fmt.Sprintf("%s.hosts[%d]", at, j), msg})
			}
		}
		for j, port := range r.Ports {
			if _, ok := parsePortRange(port); !ok {
				out = append(out, Problem{fmt.Sprintf("%s.ports[%d]", at, j), fmt.Sprintf("%q is not a port pattern: want a port from 1 to 65535 or a range of them, optionally for one protocol, such as 5432, 5432/tcp or 45000-45999/udp", port)})
			}
		}
	}
	return out
}

func isNamespace(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }

// Problem is one thing wrong with the policy: Key is relative to the section.
type Problem struct{ Key, Message string }

// checkPattern says what is wrong with a host pattern, "" if nothing: it must be a
// host as PIC publishes it (normalized: lower-case, punycode), optionally behind "*.".
func checkPattern(pattern string) string {
	rest, wildcard := strings.CutPrefix(pattern, "*.")
	normalized, problem := hostname.Normalize(rest, "")
	switch {
	case problem != nil && wildcard && !strings.Contains(rest, "."):
		// *.com: a single label is a valid suffix to write but allows a whole TLD.
		return fmt.Sprintf("%q allows every host under %q: want a wildcard over a domain, such as *.team-a.example.com", pattern, rest)
	case problem != nil:
		return fmt.Sprintf("%q is not a host or *.domain pattern: %s", pattern, problem.Message)
	case normalized != rest:
		return fmt.Sprintf("%q is not written as PIC compares hosts: write %q", pattern, strings.TrimSuffix(pattern, rest)+normalized)
	}
	return ""
}
