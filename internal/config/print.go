package config

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// Print writes the configuration as YAML that Load accepts as a file, each value
// followed by a comment saying where it came from (origins may be nil). The aliases of
// tunnelClassMapping are shown in the tunnels section. The API key is never shown: only
// whether it is set and where from.
func Print(w io.Writer, c *Config, origins Origins) error {
	p := &printer{origins: origins}
	p.comment("Effective configuration of pangolin-ingress-controller.")
	p.comment("Where each value came from follows it; a flag wins over an environment variable,")
	p.comment("which wins over the file, which wins over the default.")
	f := &file{Config: *c, TunnelNamespace: c.Tunnels.Namespace}
	parent := ""
	for _, k := range keys {
		switch k.name {
		case "tunnelClassMapping":
			continue // its aliases are printed under tunnels
		case "defaultTunnel":
			p.tunnel(k.name, "", c.Tunnels.Default, k.name)
			continue
		case "tunnels":
			p.aliases(c.Tunnels.Aliases)
			continue
		}
		name, indent := k.name, ""
		if group, child, nested := strings.Cut(k.name, "."); nested {
			if group != parent {
				p.line(group+":", "")
				parent = group
			}
			name, indent = child, "  "
		}
		p.line(indent+name+": "+scalarYAML(lookup(f, k.name)), k.name)
		if k.name == "pangolin.apiKeyFile" {
			p.line(indent+"# apiKey ("+EnvAPIKey+" or apiKeyFile): "+apiKeyStatus(c.Pangolin), "")
		}
	}
	_, err := w.Write(p.bytes())
	return err
}

type printer struct {
	origins Origins
	lines   []printLine
}

type printLine struct{ text, comment string }

func (p *printer) comment(text string) { p.lines = append(p.lines, printLine{"# " + text, ""}) }

// line adds a line whose comment is the origin of originKey ("" for none).
func (p *printer) line(text, originKey string) {
	pl := printLine{text: text}
	if o, ok := p.origins[originKey]; ok && originKey != "" {
		pl.comment = "# " + o.String()
	}
	p.lines = append(p.lines, pl)
}

// tunnel prints a tunnel as "namespace/name", or as an object when it has allowed namespaces.
func (p *printer) tunnel(name, indent string, t tunnel.Tunnel, originKey string) {
	if len(t.AllowedNamespaces) == 0 {
		p.line(indent+name+": "+scalarYAML(refString(t)), originKey)
		return
	}
	p.line(indent+name+":", originKey)
	p.line(indent+"  name: "+scalarYAML(t.Name), "")
	if t.Namespace != "" {
		p.line(indent+"  namespace: "+scalarYAML(t.Namespace), "")
	}
	p.line(indent+"  allowedNamespaces: "+scalarYAML(t.AllowedNamespaces), "")
}

func (p *printer) aliases(aliases map[string]tunnel.Tunnel) {
	if len(aliases) == 0 {
		p.line("tunnels: {}", "")
		return
	}
	p.line("tunnels:", "")
	names := make([]string, 0, len(aliases))
	for alias := range aliases {
		names = append(names, alias)
	}
	slices.Sort(names)
	for _, alias := range names {
		p.tunnel(scalarYAML(alias), "  ", aliases[alias], "tunnels."+alias)
	}
}

// bytes aligns the comments in one column.
func (p *printer) bytes() []byte {
	width := 0
	for _, l := range p.lines {
		if l.comment != "" {
			width = max(width, len(l.text))
		}
	}
	var b bytes.Buffer
	for _, l := range p.lines {
		if l.comment == "" {
			fmt.Fprintln(&b, l.text)
		} else {
			fmt.Fprintf(&b, "%-*s  %s\n", width, l.text, l.comment)
		}
	}
	return b.Bytes()
}

// scalarYAML writes a value on one line, quoted only where YAML needs it.
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
	}
	out, err := yaml.Marshal(printable(v))
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return strings.TrimSuffix(string(out), "\n")
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

// printable writes durations as people do: 5m rather than 5m0s.
func printable(v any) any {
	d, ok := v.(time.Duration)
	if !ok {
		return v
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
