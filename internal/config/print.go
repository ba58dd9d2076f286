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
// followed by where it came from (origins may be nil). The aliases of tunnelClassMapping
// are shown in the tunnels section; the API key only as set or not, and from where.
func Print(w io.Writer, c *Config, origins Origins) error {
	var b strings.Builder
	b.WriteString(printHeader)
	line := func(text, key string) {
		if o, ok := origins[key]; ok {
			text = fmt.Sprintf("%-40s  # %s", text, o)
		}
		b.WriteString(text + "\n")
	}
	vals, group := values(c), ""
	for _, k := range keys {
		name, indent := k.name, ""
		if g, child, nested := strings.Cut(k.name, "."); nested {
			if g != group {
				line(g+":", "")
				group = g
			}
			name, indent = child, "  "
		}
		switch name {
		case "tunnelClassMapping": // its aliases are printed under tunnels
		case "defaultTunnel":
			line(name+": "+tunnelYAML(c.Tunnels.Default), name)
		case "tunnels":
			if name += ":"; len(c.Tunnels.Aliases) == 0 {
				name += " {}"
			}
			line(name, "")
			for _, alias := range slices.Sorted(maps.Keys(c.Tunnels.Aliases)) {
				line("  "+scalarYAML(alias)+": "+tunnelYAML(c.Tunnels.Aliases[alias]), "tunnels."+alias)
			}
		default:
			line(indent+name+": "+scalarYAML(vals[k.name]), k.name)
		}
		if k.name == "pangolin.apiKeyFile" {
			line(indent+"# apiKey ("+EnvAPIKey+" or apiKeyFile): "+apiKeyStatus(c.Pangolin), "")
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
	return scalarYAML(tunnelSpec(t))
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

// scalarYAML writes a value as YAML on one line, and a duration as people write it: 5m
// rather than 5m0s.
func scalarYAML(v any) string {
	if d, ok := v.(time.Duration); ok {
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		v = strings.Replace(s, "h0m", "h", 1)
	}
	out, err := yaml.Marshal(struct {
		V any `yaml:"v,flow"`
	}{v})
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(out), "v: "), "\n")
}

// formatValue shows a value in a message: text quoted, anything else as YAML.
func formatValue(v any) string {
	if d, ok := v.(time.Duration); ok {
		v = d.String()
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return scalarYAML(v)
}
