package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Get sends GET url with a timeout and returns the status and body: how the e2e suite
// and the benchmark talk to PIC's metrics and probe listeners.
func Get(ctx context.Context, url string, timeout time.Duration) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// Metrics is a parsed Prometheus text exposition, as PIC serves it on /metrics.
type Metrics map[string]*dto.MetricFamily

// ParseMetrics parses a text exposition.
func ParseMetrics(text string) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return families, nil
}

// Sum adds the values of the series of name whose labels include every pair in match.
// name may end in _count or _sum to read a histogram's or a summary's.
func (m Metrics) Sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, sample := range m.samples(name, match) {
		total += sample
	}
	return total
}

// Has reports whether name has a series whose labels include every pair in match: a
// vector with no child set is not exported at all.
func (m Metrics) Has(name string, match map[string]string) bool {
	return len(m.samples(name, match)) > 0
}

func (m Metrics) samples(name string, match map[string]string) []float64 {
	family, part := m[name], ""
	if family == nil {
		for _, suffix := range []string{"_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && m[base] != nil {
				family, part = m[base], suffix
			}
		}
	}
	if family == nil {
		return nil
	}
	var out []float64
	for _, metric := range family.GetMetric() {
		if !hasLabels(metric, match) {
			continue
		}
		out = append(out, value(metric, part))
	}
	return out
}

func hasLabels(metric *dto.Metric, match map[string]string) bool {
	found := 0
	for _, pair := range metric.GetLabel() {
		if want, ok := match[pair.GetName()]; ok {
			if pair.GetValue() != want {
				return false
			}
			found++
		}
	}
	return found == len(match)
}

// value is a sample's value; part is "", "_count" or "_sum".
func value(metric *dto.Metric, part string) float64 {
	switch {
	case metric.Counter != nil:
		return metric.GetCounter().GetValue()
	case metric.Gauge != nil:
		return metric.GetGauge().GetValue()
	case metric.Untyped != nil:
		return metric.GetUntyped().GetValue()
	case metric.Histogram != nil && part == "_count":
		return float64(metric.GetHistogram().GetSampleCount())
	case metric.Histogram != nil && part == "_sum":
		return metric.GetHistogram().GetSampleSum()
	case metric.Summary != nil && part == "_count":
		return float64(metric.GetSummary().GetSampleCount())
	case metric.Summary != nil && part == "_sum":
		return metric.GetSummary().GetSampleSum()
	}
	return 0
}
