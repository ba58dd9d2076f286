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
	return tunnelSpec{Name: t.Name, Namespace: t.Namespace}, nil
}

// parseRef reads "name" or "namespace/name"; check judges the names.
func parseRef(s string) (tunnel.Tunnel, bool) {
	ns, name, qualified := strings.Cut(s, "/")
	if !qualified {
		ns, name = "", s
	}
	return tunnel.Tunnel{Name: name, Namespace: ns}, name != "" && (!qualified || ns != "") && !strings.Contains(name, "/")
}

// tunnels assembles Config.Tunnels from defaultTunnel, tunnelNamespace, the file's
// tunnels section and tunnelClassMapping. check judges the names.
func (l *loader) tunnels(f *file) tunnel.Resolver {
	spec := func(s tunnelSpec, alias string) tunnel.Tunnel {
		return tunnel.Tunnel{Name: cmp.Or(s.Name, alias), Namespace: s.Namespace, AllowedNamespaces: s.AllowedNamespaces}
	}
	r := tunnel.Resolver{Default: spec(f.DefaultTunnel, ""), Namespace: f.TunnelNamespace, Aliases: map[string]tunnel.Tunnel{}}
	// viper drops an entry with nothing under it ("edge:" or "edge: {}"), which names
	// the tunnel after its alias.
	section, _ := l.v.Get("tunnels").(map[string]any)
	for alias, v := range section {
		if m, isMap := v.(map[string]any); v == nil || isMap && len(m) == 0 {
			r.Aliases[alias] = tunnel.Tunnel{Name: alias}
		}
	}
	for alias, s := range f.TunnelSection {
		r.Aliases[alias] = spec(s, alias)
	}
	defined := map[string]string{} // alias → where it is defined, to report a second definition
	for alias := range r.Aliases {
		l.origins["tunnels."+alias] = l.origins["tunnels"]
		defined[alias] = fmt.Sprintf("tunnels.%s (%s)", alias, l.origins["tunnels"].where())
	}
	if !l.probs.has("tunnelClassMapping") { // a mapping that did not decode has no entries
		l.mapping(f.TunnelClassMapping, r.Aliases, defined)
	}
	return r
}

// mapping adds the alias=tunnel entries of tunnelClassMapping to aliases.
func (l *loader) mapping(entries []string, aliases map[string]tunnel.Tunnel, defined map[string]string) {
	const name = "tunnelClassMapping"
	where := fmt.Sprintf("%s (%s)", name, l.where(name))
	for _, entry := range entries {
		alias, target, _ := strings.Cut(entry, "=")
		alias, target = strings.TrimSpace(alias), strings.TrimSpace(target)
		t, ok := parseRef(target)
		switch prev, dup := defined[alias]; {
		case alias == "" || target == "":
			l.probs.add(name, "%s = %q: %s", where, entry, wantMappingEntry)
		case !ok:
			l.probs.add(name, "%s = %q: %s", where, entry, wantTunnelRef)
		case dup && prev == where:
			l.probs.add(name, "%s defines alias %q twice: keep one", where, alias)
		case dup:
			l.probs.add(name, "%s and %s both define alias %q: keep one of them", prev, where, alias)
		default:
			aliases[alias], defined[alias], l.origins["tunnels."+alias] = t, where, l.origins[name]
		}
	}
}

// checkTunnels checks the default tunnel and the aliases.
func checkTunnels(r tunnel.Resolver, ps *problems, where func(string) string) {
	if msg := checkTunnel(r.Default); msg != "" && (r.Default.Name != "" || r.Default.Namespace != "" || r.Default.AllowedNamespaces != nil) {
		ps.add("defaultTunnel", "defaultTunnel (%s) = %q: %s", where("defaultTunnel"), refString(r.Default), msg)
	}
	for _, alias := range slices.Sorted(maps.Keys(r.Aliases)) {
		path, t := "tunnels."+alias, r.Aliases[alias]
		if !isNamespace(alias) {
			ps.add(path, "%s (%s) = %q: invalid alias; %s", path, where(path), alias, wantAlias)
		} else if msg := checkTunnel(t); msg != "" {
			ps.add(path, "%s (%s) = %q: %s", path, where(path), refString(t), msg)
		}
	}
}

// checkTunnel checks the names of a tunnel.
func checkTunnel(t tunnel.Tunnel) string {
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
	}
	for _, ns := range t.AllowedNamespaces {
		if ns != "*" && !isNamespace(ns) {
			return fmt.Sprintf("%q is not a namespace name (%s); %s", ns, wantNamespace, wantAllowed)
		}
	}
	return ""
}

// refString shows a tunnel as "namespace/name" or "name".
func refString(t tunnel.Tunnel) string {
	if t.Namespace == "" {
		return t.Name
	}
	return t.Namespace + "/" + t.Name
}
