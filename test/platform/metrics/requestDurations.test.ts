import test from 'ava';
import client from 'prom-client';
import { RequestDurations } from '../../../src/platform/metrics/requestDurations.ts';

// The observations of a few requests, including bounds exactly, the largest bucket and beyond it.
const OBSERVED: Array<[string, string, number, number]> = [
  ['GET', '/readyz', 200, 0.0004],
  ['GET', '/readyz', 200, 0.001],
  ['GET', '/readyz', 503, 2.1],
  ['POST', '/auth/sign-in', 422, 0.012],
  ['POST', '/auth/sign-in', 422, 5],
  ['POST', 'unmatched', 429, 7.5],
  ['_OTHER', 'unmatched', 405, 0],
];

/** The same requests observed by prom-client's own Histogram, as the service did before. */
function promClientRegistry(): client.Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role: 'instance', worker: '0' });
  const histogram = new client.Histogram({
    name: 'backplane_http_request_duration_seconds',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  for (const [method, route, status, seconds] of OBSERVED) {
    histogram.observe({ method, route, status: String(status) }, seconds);
  }
  return registry;
}

function ownRegistry(): client.Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role: 'instance', worker: '0' });
  const durations = new RequestDurations(registry);
  for (const [method, route, status, seconds] of OBSERVED) {
    durations.observe(method, route, status, seconds);
  }
  return registry;
}

test('the request histogram is exposed exactly as prom-client exposes the same observations', async (t) => {
  t.is(await ownRegistry().metrics(), await promClientRegistry().metrics());
  // prom-client adds an empty exemplar to each value; Backplane records none.
  const withoutExemplars = (metrics: client.MetricObjectWithValues<client.MetricValue<string>>[]) =>
    metrics.map((metric) => ({
      ...metric,
      values: metric.values.map(({ exemplar: _none, ...value }: client.MetricValue<string> & { exemplar?: unknown }) => value),
    }));
  t.deepEqual(withoutExemplars(await ownRegistry().getMetricsAsJSON()), withoutExemplars(await promClientRegistry().getMetricsAsJSON()));
});

test("the cluster's scrape sums it across instances as it sums a prom-client histogram", async (t) => {
  const own = client.AggregatorRegistry.aggregate([await ownRegistry().getMetricsAsJSON(), await ownRegistry().getMetricsAsJSON()]);
  const theirs = client.AggregatorRegistry.aggregate([await promClientRegistry().getMetricsAsJSON(), await promClientRegistry().getMetricsAsJSON()]);
  t.is(await own.metrics(), await theirs.metrics());
  t.regex(await own.metrics(), /backplane_http_request_duration_seconds_count\{method="GET",route="\/readyz",status="200",role="instance",worker="0"\} 4/);
});

test('a reset registry exposes no series until the next request', async (t) => {
  const registry = ownRegistry();
  registry.resetMetrics();
  t.notRegex(await registry.metrics(), /_count\{/);
});
