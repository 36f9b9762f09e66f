// Package observe is what the observed packages of sessionlog (eventlog,
// loop) do alike about their logger and metrics: a logger that is never
// nil, instruments made only when the caller gave a MeterProvider, and a
// clock read only when they were. Each package keeps its own instrument
// names and what it records; this package holds only the setup.
package observe
