package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

const (
	wantAlias       = "want an alias of lowercase letters, digits and '-' (at most 63 characters), since it names the IngressClass pangolin-<alias>"
	wantTunnelEntry = "want a tunnel name, namespace/name, or a mapping with name, namespace and allowedNamespaces"
	wantAllowed     = `want a list of namespace names, such as [shop, blog], or ["*"] for all namespaces`
)

var tunnelFields = []string{"name", "namespace", "allowedNamespaces"}

// tunnels assembles Config.Tunnels from defaultTunnel, tunnelClassMapping and the file's
// tunnels section (tunnelNamespace is a plain key, already read).
func (l *loader) tunnels() {
	l.defaultTunnel()
	aliases := map[string]tunnel.Tunnel{}
	defined := map[string]string{} // alias → where it is defined, to report a second definition
	l.tunnelsSection(aliases, defined)
	l.mapping(aliases, defined)
	l.cfg.Tunnels.Aliases = aliases
}

func (l *loader) fileOrigin(n *yaml.Node) Origin {
	return Origin{Kind: FromFile, Name: l.path, Line: n.Line}
}

// defaultTunnel reads "name", "namespace/name", "" (no default) or, in the file, a
// tunnel object.
func (l *loader) defaultTunnel() {
	k := keyByName("defaultTunnel")
	o := l.orig[k.name]
	if n := l.nodes[k.name]; o.Kind == FromFile && n.Kind == yaml.MappingNode {
		if t, ok := l.fileTunnel(k.name, n, ""); ok {
			l.cfg.Tunnels.Default = t
		}
		return
	}
	raw := l.raw(k)
	v, ok := coerce(k, raw)
	if !ok {
		l.bad(k, o, raw, k.want)
		return
	}
	if v.(string) == "" {
		l.cfg.Tunnels.Default = tunnel.Tunnel{}
		return
	}
	t, msg := parseRef(v.(string))
	if msg != "" {
		l.bad(k, o, raw, msg)
		return
	}
	l.cfg.Tunnels.Default = t
}

// tunnelsSection reads the file's tunnels: alias → tunnel.
func (l *loader) tunnelsSection(aliases map[string]tunnel.Tunnel, defined map[string]string) {
	n := l.nodes["tunnels"]
	switch {
	case n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return
	case n.Kind != yaml.MappingNode:
		l.badAt("tunnels", l.fileOrigin(n), nil, "got "+describe(n)+"; "+keyByName("tunnels").want)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		alias, path, o := kn.Value, "tunnels."+kn.Value, l.fileOrigin(kn)
		if !isDNSLabel(alias) {
			l.badAt(path, o, alias, "invalid alias; "+wantAlias)
			continue
		}
		t, ok := l.fileTunnel(path, vn, alias)
		if !ok {
			continue
		}
		aliases[alias], defined[alias], l.orig[path] = t, fmt.Sprintf("%s (%s)", path, o.where()), o
	}
}

// fileTunnel reads a tunnel given in the file as "name", "namespace/name" or an object;
// an object's name defaults to defaultName (its alias).
func (l *loader) fileTunnel(path string, n *yaml.Node, defaultName string) (tunnel.Tunnel, bool) {
	n = deref(n)
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		t, msg := parseRef(strings.TrimSpace(n.Value))
		if msg != "" {
			l.badAt(path, l.fileOrigin(n), n.Value, msg)
			return t, false
		}
		return t, true
	case n.Kind != yaml.MappingNode:
		l.badAt(path, l.fileOrigin(n), nil, "got "+describe(n)+"; "+wantTunnelEntry)
		return tunnel.Tunnel{}, false
	}

	var t tunnel.Tunnel
	ok := true
	nameAt, nsAt := n, n
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], deref(n.Content[i+1])
		sub := path + "." + kn.Value
		switch kn.Value {
		case "name", "namespace":
			if vn.Kind != yaml.ScalarNode || vn.Tag == "!!null" {
				l.badAt(sub, l.fileOrigin(kn), nil, "got "+describe(vn)+"; want a "+map[string]string{"name": "PangolinTunnel name", "namespace": "namespace name"}[kn.Value])
				ok = false
				continue
			}
			if kn.Value == "name" {
				t.Name, nameAt = strings.TrimSpace(vn.Value), kn
			} else {
				t.Namespace, nsAt = strings.TrimSpace(vn.Value), kn
			}
		case "allowedNamespaces":
			list, raw, msg := allowedList(vn)
			if msg != "" {
				l.badAt(sub, l.fileOrigin(kn), raw, msg)
				ok = false
				continue
			}
			t.AllowedNamespaces = list
		default:
			hint := suggest(kn.Value, tunnelFields)
			if hint == "" {
				hint = "; known keys here: " + strings.Join(tunnelFields, ", ")
			}
			l.probs.add(path, "%s: unknown key %q%s", l.fileOrigin(kn), sub, hint)
			ok = false
		}
	}
	if t.Name == "" {
		t.Name = defaultName
	}
	switch {
	case t.Name == "":
		l.badAt(path, l.fileOrigin(n), nil, "name is missing: want the name of a PangolinTunnel")
		ok = false
	case strings.Contains(t.Name, "/"):
		l.badAt(path+".name", l.fileOrigin(nameAt), t.Name, "want a tunnel name without '/'; give the namespace as namespace:")
		ok = false
	case checkTunnelName(t.Name) != "":
		l.badAt(path+".name", l.fileOrigin(nameAt), t.Name, checkTunnelName(t.Name))
		ok = false
	}
	if t.Namespace != "" && !isDNSLabel(t.Namespace) {
		l.badAt(path+".namespace", l.fileOrigin(nsAt), t.Namespace, "want a namespace name ("+wantNamespace+")")
		ok = false
	}
	return t, ok
}

// allowedList reads allowedNamespaces: a non-empty list of namespace names or "*".
func allowedList(n *yaml.Node) (list []string, raw any, msg string) {
	if n.Kind != yaml.SequenceNode {
		if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
			return nil, n.Value, wantAllowed
		}
		return nil, nil, "got " + describe(n) + "; " + wantAllowed
	}
	items := make([]any, 0, len(n.Content))
	for _, item := range n.Content {
		item = deref(item)
		if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
			return nil, nil, "an item is " + describe(item) + "; " + wantAllowed
		}
		items = append(items, item.Value)
		list = append(list, strings.TrimSpace(item.Value))
	}
	if len(list) == 0 {
		// The Resolver reads an empty list as "everyone": spell that out instead.
		return nil, []any{}, `an empty list would allow every namespace; list the namespaces, or write ["*"] to allow all`
	}
	if msg := checkAllowed(list); msg != "" {
		return nil, items, msg
	}
	return list, items, ""
}

func checkAllowed(list []string) string {
	for _, ns := range list {
		if ns != "*" && !isDNSLabel(ns) {
			return fmt.Sprintf("%q is not a namespace name (%s); %s", ns, wantNamespace, wantAllowed)
		}
	}
	return ""
}

// mapping reads tunnelClassMapping: alias=tunnel entries, one per line or separated by
// commas, with blank lines and # comments ignored.
func (l *loader) mapping(aliases map[string]tunnel.Tunnel, defined map[string]string) {
	k := keyByName("tunnelClassMapping")
	o := l.orig[k.name]
	raw := l.raw(k)
	text, ok := raw.(string)
	if !ok {
		l.bad(k, o, raw, k.want+"; for structured entries use the tunnels section")
		return
	}
	// lineOrigin points at an entry: its line in the file, or its line in the variable or flag.
	lineOrigin := func(i int) Origin {
		lo := o
		switch {
		case o.Kind != FromFile:
			lo.Line = i
		case l.nodes[k.name].Style&yaml.LiteralStyle != 0:
			lo.Line = l.nodes[k.name].Line + i // the text starts on the line after "|"
		default:
			lo.Line = l.nodes[k.name].Line
		}
		return lo
	}
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for entry := range strings.SplitSeq(line, ",") {
			if entry = strings.TrimSpace(entry); entry == "" {
				continue
			}
			lo := lineOrigin(i + 1)
			alias, target, found := strings.Cut(entry, "=")
			alias, target = strings.TrimSpace(alias), strings.TrimSpace(target)
			if !found || alias == "" || target == "" {
				l.badAt(k.name, lo, entry, wantMappingEntry)
				continue
			}
			if !isDNSLabel(alias) {
				l.badAt(k.name, lo, entry, fmt.Sprintf("invalid alias %q; %s", alias, wantAlias))
				continue
			}
			t, msg := parseRef(target)
			if msg != "" {
				l.badAt(k.name, lo, entry, msg)
				continue
			}
			where := fmt.Sprintf("%s (%s)", k.name, lo.where())
			if prev, dup := defined[alias]; dup {
				l.probs.add(k.name, "%s and %s both define alias %q: keep one of them", prev, where, alias)
				continue
			}
			aliases[alias], defined[alias], l.orig["tunnels."+alias] = t, where, lo
		}
	}
}

// parseRef reads "name" or "namespace/name".
func parseRef(s string) (tunnel.Tunnel, string) {
	ns, name, qualified := strings.Cut(s, "/")
	if !qualified {
		ns, name = "", s
	}
	if name == "" || qualified && ns == "" || strings.Contains(name, "/") {
		return tunnel.Tunnel{}, wantTunnelRef
	}
	if msg := checkTunnelName(name); msg != "" {
		return tunnel.Tunnel{}, msg
	}
	if ns != "" && !isDNSLabel(ns) {
		return tunnel.Tunnel{}, fmt.Sprintf("%q is not a namespace name (%s); %s", ns, wantNamespace, wantTunnelRef)
	}
	return tunnel.Tunnel{Name: name, Namespace: ns}, ""
}

// parseDefaultTunnel reads the built-in default.
func parseDefaultTunnel(s string) tunnel.Tunnel {
	t, _ := parseRef(s)
	return t
}

func checkTunnelName(name string) string {
	if !isDNSSubdomain(name) {
		return fmt.Sprintf("%q is not a PangolinTunnel name: want lowercase letters, digits, '-' and '.', at most 253 characters", name)
	}
	return ""
}

// checkTunnel checks a tunnel built in code.
func checkTunnel(t tunnel.Tunnel) string {
	switch {
	case t.Name == "":
		return "the tunnel name is missing; " + wantTunnelRef
	case strings.Contains(t.Name, "/"):
		return "the tunnel name contains '/'; give the namespace in Namespace"
	case checkTunnelName(t.Name) != "":
		return checkTunnelName(t.Name)
	case t.Namespace != "" && !isDNSLabel(t.Namespace):
		return fmt.Sprintf("%q is not a namespace name (%s)", t.Namespace, wantNamespace)
	}
	return checkAllowed(t.AllowedNamespaces)
}

// refString shows a tunnel as "namespace/name" or "name".
func refString(t tunnel.Tunnel) string {
	if t.Namespace == "" {
		return t.Name
	}
	return t.Namespace + "/" + t.Name
}

// validateResolver checks a tunnel.Resolver built in code.
func validateResolver(r tunnel.Resolver, ps *problems) {
	def := keyByName("defaultTunnel")
	if r.Default.Name != "" || r.Default.Namespace != "" || len(r.Default.AllowedNamespaces) > 0 {
		if msg := checkTunnel(r.Default); msg != "" {
			ps.add(def.name, "%s (%s) = %s: %s", def.name, unknownWhere(def), formatValue(refString(r.Default)), msg)
		}
	}
	aliases := make([]string, 0, len(r.Aliases))
	for alias := range r.Aliases {
		aliases = append(aliases, alias)
	}
	slices.Sort(aliases)
	for _, alias := range aliases {
		path := "tunnels." + alias
		if !isDNSLabel(alias) {
			ps.add(path, "%s = %q: invalid alias; %s", path, alias, wantAlias)
		} else if msg := checkTunnel(r.Aliases[alias]); msg != "" {
			ps.add(path, "%s = %s: %s", path, formatValue(refString(r.Aliases[alias])), msg)
		}
	}
}
