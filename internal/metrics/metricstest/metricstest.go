// Package metricstest helps tests read a /metrics page: it finds the samples of a metric family
// whose labels include a given set.
package metricstest

import dto "github.com/prometheus/client_model/go"

// Matching returns the samples of family name whose labels include every pair of want.
func Matching(fams map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	fam, ok := fams[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		got := make(map[string]string, len(m.GetLabel()))
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if match {
			out = append(out, m)
		}
	}
	return out
}
