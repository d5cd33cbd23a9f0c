// No /metrics route: no Prometheus metrics, or a framework without a route here (serve `metricsRegistry` yourself).
export {};
