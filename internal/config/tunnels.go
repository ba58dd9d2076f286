package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

const (
	wantAlias        = "want an alias of lowercase letters, digits and '-' (at most 63 characters), since it names the IngressClass pangolin-<alias>"
	wantAllowed      = `want a list of namespace names, such as [shop, blog], or ["*"] for all namespaces`
	wantMappingEntry = "want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel"
)

// tunnelSpec is a tunnel as the file writes it: "name", "namespace/name" or a mapping.
// It mirrors tunnel.Tunnel, to convert to and from it, with the file's names.
type tunnelSpec struct {
	Name              string   `mapstructure:"name" yaml:"name"` // default: the alias
	Namespace         string   `mapstructure:"namespace" yaml:"namespace,omitempty"`
	AllowedNamespaces []string `mapstructure:"allowedNamespaces" yaml:"allowedNamespaces"`
}

var tunnelFields = []string{"name", "namespace", "allowedNamespaces"}

// tunnelRef decodes "name" and "namespace/name" into a tunnelSpec.
func tunnelRef(_, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || to != reflect.TypeFor[tunnelSpec]() {
		return data, nil
	}
	t, ok := parseRef(s)
	if !ok && s != "" {
		return nil, errors.New(wantTunnelRef)
	}
	return tunnelSpec(t), nil
}

// parseRef reads "name" or "namespace/name"; check judges the names.
func parseRef(s string) (tunnel.Tunnel, bool) {
	ns, name, qualified := strings.Cut(s, "/")
	if !qualified {
		ns, name = "", s
	}
	return tunnel.Tunnel{Name: name, Namespace: ns}, name != "" && (!qualified || ns != "") && !strings.Contains(name, "/")
}

// tunnels assembles Config.Tunnels from defaultTunnel, tunnelNamespace, the tunnels
// section and the alias=tunnel entries of tunnelClassMapping; check judges the names.
func (l *loader) tunnels(f *file) tunnel.Resolver {
	r := tunnel.Resolver{Default: tunnel.Tunnel(f.DefaultTunnel), Namespace: f.TunnelNamespace, Aliases: map[string]tunnel.Tunnel{}}
	// viper leaves out of what it decodes an entry with nothing under it ("edge:" or
	// "edge: {}"), which, like a mapping without a name, names the tunnel after its alias.
	section, _ := l.v.Get("tunnels").(map[string]any)
	for alias := range section {
		t := tunnel.Tunnel(f.TunnelSection[alias])
		t.Name = cmp.Or(t.Name, alias)
		r.Aliases[alias], l.origins["tunnels."+alias] = t, l.origins["tunnels"]
	}
	const m = "tunnelClassMapping"
	where := fmt.Sprintf("%s (%s)", m, l.where(m))
	for _, entry := range f.TunnelClassMapping {
		alias, target, _ := strings.Cut(entry, "=")
		alias, target = strings.TrimSpace(alias), strings.TrimSpace(target)
		t, ok := parseRef(target)
		_, inSection := section[alias]
		switch _, dup := r.Aliases[alias]; {
		case alias == "" || target == "":
			l.probs.add(m, "%s = %q: %s", where, entry, wantMappingEntry)
		case !ok:
			l.probs.add(m, "%s = %q: %s", where, entry, wantTunnelRef)
		case inSection:
			l.probs.add(m, "tunnels.%s (%s) and %s both define alias %q: keep one of them", alias, l.where("tunnels"), where, alias)
		case dup:
			l.probs.add(m, "%s defines alias %q twice: keep one", where, alias)
		default:
			r.Aliases[alias], l.origins["tunnels."+alias] = t, l.origins[m]
		}
	}
	return r
}

// checkTunnels checks the default tunnel, unless there is none, and the aliases.
func (l *loader) checkTunnels(r tunnel.Resolver) {
	if msg := checkTunnel(r.Default); msg != "" && !reflect.ValueOf(r.Default).IsZero() {
		l.bad("defaultTunnel", refString(r.Default), msg)
	}
	for _, alias := range slices.Sorted(maps.Keys(r.Aliases)) {
		if !isNamespace(alias) {
			l.bad("tunnels."+alias, alias, "invalid alias; "+wantAlias)
		} else if msg := checkTunnel(r.Aliases[alias]); msg != "" {
			l.bad("tunnels."+alias, refString(r.Aliases[alias]), msg)
		}
	}
}

// checkTunnel says what is wrong with the names of a tunnel, or "".
func checkTunnel(t tunnel.Tunnel) string {
	bad := slices.IndexFunc(t.AllowedNamespaces, func(ns string) bool { return ns != "*" && !isNamespace(ns) })
	switch {
	case t.Name == "":
		return "the tunnel name is missing; " + wantTunnelRef
	case strings.Contains(t.Name, "/"):
		return "the tunnel name contains '/'; give the namespace as namespace"
	case !isSubdomain(t.Name):
		return fmt.Sprintf("%q is not a PangolinTunnel name: want lowercase letters, digits, '-' and '.', at most 253 characters", t.Name)
	case t.Namespace != "" && !isNamespace(t.Namespace):
		return fmt.Sprintf("%q is not a namespace name (%s)", t.Namespace, wantNamespace)
	case t.AllowedNamespaces != nil && len(t.AllowedNamespaces) == 0:
		// The Resolver reads an empty list as "everyone": spell that out instead.
		return `allowedNamespaces is empty, which would allow every namespace; list the namespaces, or write ["*"] to allow all`
	case bad >= 0:
		return fmt.Sprintf("%q is not a namespace name (%s); %s", t.AllowedNamespaces[bad], wantNamespace, wantAllowed)
	}
	return ""
}

// refString shows a tunnel as "namespace/name" or "name".
func refString(t tunnel.Tunnel) string { return strings.TrimPrefix(t.Namespace+"/"+t.Name, "/") }
