// Package metrictest is a recording OpenTelemetry MeterProvider for tests:
// it keeps, per instrument name, how many measurements were made and
// their sum, overall and per attribute value. It implements the
// instruments the library uses (Int64Counter, Int64Histogram,
// Float64Histogram); every other instrument is a no-op. Only tests
// import it: the library depends on the metric API alone.
package metrictest
