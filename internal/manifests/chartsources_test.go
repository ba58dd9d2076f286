package manifests

import (
	"fmt"
	"testing"
)

// sourceCase is a way of setting the chart's values, and whether PIC then runs a source.
type sourceCase struct {
	name, values string
	want         bool
}

// enablingCases are the ways the chart's values turn source on or leave it off:
// config.sources in both forms, --sources flags in extraArgs, PIC_SOURCES in extraEnv,
// which of them wins, and another opt-in source (other) that does not turn it on.
func enablingCases(source, other string) []sourceCase {
	return []sourceCase{
		{"the default values enable ingress only", "", false},
		{"config.sources as a list", fmt.Sprintf("config: {sources: [ingress, %s]}", source), true},
		{"config.sources as a comma-separated string", fmt.Sprintf(`config: {sources: "ingress, %s"}`, source), true},
		{"config.sources with " + source + " alone", fmt.Sprintf("config: {sources: [%s]}", source), true},
		{"config.sources with " + other + ", not " + source, fmt.Sprintf("config: {sources: [ingress, %s]}", other), false},
		{"--sources=… in extraArgs", fmt.Sprintf("extraArgs: ['--sources=ingress,%s']", source), true},
		{"--sources … in extraArgs", fmt.Sprintf("extraArgs: [--sources, %s]", source), true},
		{"repeated --sources flags add up", fmt.Sprintf("extraArgs: [--sources=ingress, --sources=%s]", source), true},
		{"PIC_SOURCES in extraEnv", fmt.Sprintf("extraEnv: [{name: PIC_SOURCES, value: 'ingress,%s'}]", source), true},
		{"--sources in extraArgs beats config.sources", fmt.Sprintf("{config: {sources: [ingress, %s]}, extraArgs: [--sources=ingress]}", source), false},
		{"PIC_SOURCES in extraEnv beats config.sources", fmt.Sprintf("{config: {sources: [%s]}, extraEnv: [{name: PIC_SOURCES, value: ingress}]}", source), false},
		{"an empty PIC_SOURCES is unset", fmt.Sprintf("{config: {sources: [%s]}, extraEnv: [{name: PIC_SOURCES, value: ''}]}", source), true},
	}
}

// chartSink is a sink as the chart's values choose it.
type chartSink struct {
	name   string
	direct bool
}

// chartSinks are both sinks, for the tests that render each case with each.
var chartSinks = []chartSink{{name: pangolinResourceSink}, {name: directSink, direct: true}}

// withSink is values with the sink chosen: the default one, or direct mode with its
// connection.
func (s chartSink) withSink(t *testing.T, values string) string {
	t.Helper()
	if !s.direct {
		return values
	}
	return mergeValues(t, values, "config: {sink: pangolin}\n"+directConnectionValues)
}
