// Request counts and latencies by route pattern (a URL would make the label set unbounded: an
// unmatched path is "unmatched"), and the listener that serves them on METRICS_PORT.
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Metrics, MetricsSources } from '../observe/metrics.js'
import { createMetricsListener, type MetricsListener } from '../observe/metrics-server.js'

export function observeRequests(app: FastifyInstance, metrics: Metrics, sources: MetricsSources, logger: Logger): MetricsListener {
  app.addHook('onResponse', (req, reply, done) => {
    metrics.request(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  metrics.sources(sources)
  const listener = createMetricsListener(metrics.registry, (err) => logger.warn({ err }, 'metrics collection failed'))
  app.addHook('onClose', async () => listener.close())
  return listener
}
