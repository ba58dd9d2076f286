package config

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

const printHeader = `# Effective configuration of pangolin-ingress-controller.
# Where each value came from follows it; a flag wins over an environment variable,
# which wins over the file, which wins over the default.
`

// Print writes the configuration as YAML that Load accepts as a file, each value
// followed by a comment saying where it came from (origins may be nil). The aliases of
// tunnelClassMapping are shown in the tunnels section. The API key is never shown, only
// whether it is set and where from.
func Print(w io.Writer, c *Config, origins Origins) error {
	var lines [][2]string // text, comment
	add := func(text, key string) {
		comment := ""
		if o, ok := origins[key]; ok {
			comment = "# " + o.String()
		}
		lines = append(lines, [2]string{text, comment})
	}
	vals := values(c)
	group := ""
	for _, k := range keys {
		name, indent := k.name, ""
		if g, child, nested := strings.Cut(k.name, "."); nested {
			if g != group {
				add(g+":", "")
				group = g
			}
			name, indent = child, "  "
		}
		switch name {
		case "tunnelClassMapping": // its aliases are printed under tunnels
		case "defaultTunnel":
			add(name+": "+tunnelYAML(c.Tunnels.Default), name)
		case "tunnels":
			add("tunnels:", "")
			if len(c.Tunnels.Aliases) == 0 {
				lines[len(lines)-1][0] += " {}"
			}
			for _, alias := range slices.Sorted(maps.Keys(c.Tunnels.Aliases)) {
				add("  "+scalarYAML(alias)+": "+tunnelYAML(c.Tunnels.Aliases[alias]), "tunnels."+alias)
			}
		default:
			add(indent+name+": "+scalarYAML(vals[k.name]), k.name)
		}
		if k.name == "pangolin.apiKeyFile" {
			add(indent+"# apiKey ("+EnvAPIKey+" or apiKeyFile): "+apiKeyStatus(c.Pangolin), "")
		}
	}
	width := 0
	for _, l := range lines {
		if l[1] != "" {
			width = max(width, len(l[0]))
		}
	}
	var b strings.Builder
	b.WriteString(printHeader)
	for _, l := range lines {
		if l[1] == "" {
			b.WriteString(l[0] + "\n")
		} else {
			fmt.Fprintf(&b, "%-*s  %s\n", width, l[0], l[1])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tunnelYAML writes a tunnel as "namespace/name", or as a mapping when it has allowed
// namespaces.
func tunnelYAML(t tunnel.Tunnel) string {
	if t.AllowedNamespaces == nil {
		return scalarYAML(refString(t))
	}
	s := "{name: " + scalarYAML(t.Name)
	if t.Namespace != "" {
		s += ", namespace: " + scalarYAML(t.Namespace)
	}
	return s + ", allowedNamespaces: " + scalarYAML(t.AllowedNamespaces) + "}"
}

func apiKeyStatus(p Pangolin) string {
	switch {
	case p.APIKey == "":
		return "(not set)"
	case p.APIKeyFile != "":
		return "(set, from file " + p.APIKeyFile + ")"
	}
	return "(set, from env " + EnvAPIKey + ")"
}

// scalarYAML writes a value on one line, quoted only where YAML needs it, and durations
// as people do: 5m rather than 5m0s.
func scalarYAML(v any) string {
	switch v := v.(type) {
	case []string:
		items := make([]string, len(v))
		for i, s := range v {
			items[i] = scalarYAML(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32)
	case time.Duration:
		s := v.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		return strings.Replace(s, "h0m", "h", 1)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return strings.TrimSuffix(string(out), "\n")
}

// formatValue shows a value in a message as the user gave it: text quoted, lists in
// brackets.
func formatValue(v any) string {
	if list, ok := v.([]string); ok {
		v = make([]any, len(list))
		for i, s := range list {
			v.([]any)[i] = s
		}
	}
	switch v := v.(type) {
	case nil:
		return "(empty)"
	case map[string]any:
		return "(a mapping)"
	case string, time.Duration:
		return fmt.Sprintf("%q", fmt.Sprint(v))
	case []any:
		items := make([]string, len(v))
		for i := range v {
			items[i] = formatValue(v[i])
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return fmt.Sprint(v)
}
