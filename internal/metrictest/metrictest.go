package metrictest

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Provider records every measurement of the instruments its meters make.
type Provider struct {
	noop.MeterProvider

	mu     sync.Mutex
	counts map[string]int64
	sums   map[string]float64
}

var _ metric.MeterProvider = (*Provider)(nil)

// New returns an empty Provider.
func New() *Provider {
	return &Provider{counts: map[string]int64{}, sums: map[string]float64{}}
}

// Meter returns a meter whose instruments record into p.
func (p *Provider) Meter(string, ...metric.MeterOption) metric.Meter { return &meter{p: p} }

// Count is the number of measurements of instrument name.
func (p *Provider) Count(name string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[name]
}

// Sum is the sum of the measurements of instrument name.
func (p *Provider) Sum(name string) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sums[name]
}

// SumWith is the sum of the measurements of instrument name that carried
// attribute key with value.
func (p *Provider) SumWith(name, key, value string) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sums[name+"{"+key+"="+value+"}"]
}

func (p *Provider) record(name string, v float64, attrs attribute.Set) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[name]++
	p.sums[name] += v
	for it := attrs.Iter(); it.Next(); {
		kv := it.Attribute()
		p.sums[name+"{"+string(kv.Key)+"="+kv.Value.Emit()+"}"] += v
	}
}

type meter struct {
	noop.Meter
	p *Provider
}

func (m *meter) Int64Counter(name string, _ ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return &int64Counter{p: m.p, name: name}, nil
}

func (m *meter) Int64Histogram(name string, _ ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	return &int64Histogram{p: m.p, name: name}, nil
}

func (m *meter) Float64Histogram(name string, _ ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return &float64Histogram{p: m.p, name: name}, nil
}

type int64Counter struct {
	noop.Int64Counter
	p    *Provider
	name string
}

func (c *int64Counter) Add(_ context.Context, v int64, opts ...metric.AddOption) {
	c.p.record(c.name, float64(v), metric.NewAddConfig(opts).Attributes())
}

type int64Histogram struct {
	noop.Int64Histogram
	p    *Provider
	name string
}

func (h *int64Histogram) Record(_ context.Context, v int64, opts ...metric.RecordOption) {
	h.p.record(h.name, float64(v), metric.NewRecordConfig(opts).Attributes())
}

type float64Histogram struct {
	noop.Float64Histogram
	p    *Provider
	name string
}

func (h *float64Histogram) Record(_ context.Context, v float64, opts ...metric.RecordOption) {
	h.p.record(h.name, v, metric.NewRecordConfig(opts).Attributes())
}
