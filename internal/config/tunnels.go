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
	wantTunnelEntry  = "want a tunnel name, namespace/name, or a mapping with name, namespace and allowedNamespaces"
	wantAllowed      = `want a list of namespace names, such as [shop, blog], or ["*"] for all namespaces`
	wantMappingEntry = "want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel"
)

var tunnelFields = []string{"name", "namespace", "allowedNamespaces"}

// tunnelSpec is a tunnel as the file writes it: "name", "namespace/name" or a mapping.
type tunnelSpec struct {
	Name              string   `mapstructure:"name"`
	Namespace         string   `mapstructure:"namespace"`
	AllowedNamespaces []string `mapstructure:"allowedNamespaces"`
}

// tunnelRef reads "name" and "namespace/name" as a tunnelSpec.
func tunnelRef(_, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || to != reflect.TypeFor[tunnelSpec]() {
		return data, nil
	}
	if s == "" {
		return tunnelSpec{}, nil
	}
	t, ok := parseRef(s)
	if !ok {
		return nil, errors.New(wantTunnelRef)
	}
	return tunnelSpec{Name: t.Name, Namespace: t.Namespace}, nil
}

// parseRef reads "name" or "namespace/name"; the names themselves are checked later.
func parseRef(s string) (tunnel.Tunnel, bool) {
	ns, name, qualified := strings.Cut(s, "/")
	if !qualified {
		ns, name = "", s
	}
	return tunnel.Tunnel{Name: name, Namespace: ns}, name != "" && !(qualified && ns == "") && !strings.Contains(name, "/")
}

// resolver assembles Config.Tunnels from defaultTunnel, tunnelNamespace, the file's
// tunnels section and tunnelClassMapping, keeping only good tunnels.
func (l *loader) resolver(f *file) tunnel.Resolver {
	r := tunnel.Resolver{Namespace: f.TunnelNamespace, Aliases: map[string]tunnel.Tunnel{}}
	r.Default, _ = l.tunnel("defaultTunnel", f.DefaultTunnel, "")
	defined := map[string]string{} // alias → where it is defined, to report a second definition
	// viper drops an entry with nothing under it ("edge:" or "edge: {}"), which names
	// the tunnel after its alias.
	section, _ := l.v.Get("tunnels").(map[string]any)
	for alias, v := range section {
		if m, isMap := v.(map[string]any); v == nil || isMap && len(m) == 0 {
			if f.TunnelSection == nil {
				f.TunnelSection = map[string]tunnelSpec{}
			}
			f.TunnelSection[alias] = tunnelSpec{}
		}
	}
	for _, alias := range slices.Sorted(maps.Keys(f.TunnelSection)) {
		path := "tunnels." + alias
		l.origins[path] = l.origins["tunnels"]
		if !isNamespace(alias) {
			l.bad(path, alias, "invalid alias; "+wantAlias)
		} else if t, ok := l.tunnel(path, f.TunnelSection[alias], alias); ok {
			r.Aliases[alias], defined[alias] = t, fmt.Sprintf("%s (%s)", path, l.origins[path].where())
		}
	}
	l.mapping(f.TunnelClassMapping, r.Aliases, defined)
	return r
}

// tunnel turns a spec into a tunnel whose name defaults to its alias.
func (l *loader) tunnel(path string, s tunnelSpec, alias string) (tunnel.Tunnel, bool) {
	t := tunnel.Tunnel{Name: cmp.Or(s.Name, alias), Namespace: s.Namespace, AllowedNamespaces: s.AllowedNamespaces}
	msg := ""
	switch {
	case t.Name == "" && t.Namespace == "" && t.AllowedNamespaces == nil:
		return t, true // defaultTunnel: "", no default tunnel
	case s.AllowedNamespaces != nil && len(s.AllowedNamespaces) == 0:
		// The Resolver reads an empty list as "everyone": spell that out instead.
		msg = `allowedNamespaces is empty, which would allow every namespace; list the namespaces, or write ["*"] to allow all`
	default:
		msg = checkTunnel(t)
	}
	if msg != "" {
		l.bad(path, refString(t), msg)
		return tunnel.Tunnel{}, false
	}
	return t, true
}

// mapping reads tunnelClassMapping: alias=tunnel entries, one per line or separated by
// commas, with blank lines and # comments ignored.
func (l *loader) mapping(text string, aliases map[string]tunnel.Tunnel, defined map[string]string) {
	const name = "tunnelClassMapping"
	o := l.origins[name]
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for entry := range strings.SplitSeq(line, ",") {
			if entry = strings.TrimSpace(entry); entry == "" {
				continue
			}
			lo := o
			if o.Kind != FromFile {
				lo.Line = i + 1
			}
			alias, target, _ := strings.Cut(entry, "=")
			alias, target = strings.TrimSpace(alias), strings.TrimSpace(target)
			t, ok := parseRef(target)
			msg := ""
			switch {
			case alias == "" || target == "":
				msg = wantMappingEntry
			case !ok:
				msg = wantTunnelRef
			case !isNamespace(alias):
				msg = fmt.Sprintf("invalid alias %q; %s", alias, wantAlias)
			default:
				msg = checkTunnel(t)
			}
			where := fmt.Sprintf("%s (%s)", name, lo.where())
			if prev, dup := defined[alias]; dup && msg == "" {
				msg = fmt.Sprintf("%s and %s both define alias %q: keep one of them", prev, where, alias)
				l.probs.add(name, "%s", msg)
				continue
			}
			if msg != "" {
				l.probs.add(name, "%s = %q: %s", where, entry, msg)
				continue
			}
			aliases[alias], defined[alias], l.origins["tunnels."+alias] = t, where, lo
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

// checkResolver checks a tunnel.Resolver built in code; Load admits only good tunnels.
func checkResolver(r tunnel.Resolver, ps *problems) {
	if def := keyByName("defaultTunnel"); r.Default.Name != "" || r.Default.Namespace != "" || len(r.Default.AllowedNamespaces) > 0 {
		if msg := checkTunnel(r.Default); msg != "" {
			ps.add(def.name, "%s (%s) = %q: %s", def.name, def.ways(), refString(r.Default), msg)
		}
	}
	for _, alias := range slices.Sorted(maps.Keys(r.Aliases)) {
		path := "tunnels." + alias
		if !isNamespace(alias) {
			ps.add(path, "%s = %q: invalid alias; %s", path, alias, wantAlias)
		} else if msg := checkTunnel(r.Aliases[alias]); msg != "" {
			ps.add(path, "%s = %q: %s", path, refString(r.Aliases[alias]), msg)
		}
	}
}
