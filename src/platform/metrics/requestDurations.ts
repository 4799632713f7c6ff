import type client from 'prom-client';

const NAME = 'backplane_http_request_duration_seconds';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One method, route and status: its counts per bucket (not cumulative), sum and count. */
/** One line of the exposition, as prom-client's registry reads a metric's values. */
interface Value {
  metricName: string;
  labels: Record<string, string | number>;
  sharedLabels?: Series['labels'];
  value: number;
}

interface Snapshot {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: Value[];
}

interface Series {
  labels: { method: string; route: string; status: string };
  counts: number[];
  sum: number;
  count: number;
}

/**
 * `backplane_http_request_duration_seconds`, a histogram by method, route pattern and status,
 * observed once per request. Not prom-client's Histogram: its observe validated and hashed the
 * labels of every request (about 5 µs, a twentieth of a probe's cost on top of bare Koa), while a
 * series here is found by one string key and the bucket by a scan of twelve bounds. The registry
 * reads it as it reads prom-client's own (`get`, `getForPromString`, aggregated across instances by
 * sum), so the exposition is the same series, byte for byte.
 */
export class RequestDurations {
  readonly name = NAME;
  readonly help = 'HTTP requests by route pattern, method and status';
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly #series = new Map<string, Series>();

  constructor(registry: client.Registry) {
    registry.registerMetric(this as unknown as client.Metric);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.#series.get(key);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    for (let bucket = 0; bucket < BUCKETS.length; bucket += 1) {
      if (seconds <= BUCKETS[bucket]!) {
        series.counts[bucket]! += 1;
        break;
      }
    }
    series.sum += seconds;
    series.count += 1;
  }

  /** The values as prom-client's text exposition reads them: `le` apart from the series' labels. */
  async getForPromString(): Promise<Snapshot> {
    const values: Value[] = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      let cumulative = 0;
      BUCKETS.forEach((bound, index) => {
        cumulative += counts[index]!;
        values.push({ metricName: `${NAME}_bucket`, labels: { le: bound }, sharedLabels: labels, value: cumulative });
      });
      values.push({ metricName: `${NAME}_bucket`, labels: { le: '+Inf' }, sharedLabels: labels, value: count });
      values.push({ metricName: `${NAME}_sum`, labels: {}, sharedLabels: labels, value: sum });
      values.push({ metricName: `${NAME}_count`, labels: {}, sharedLabels: labels, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The values with every label in one object, as getMetricsAsJSON and the cluster's aggregation read them. */
  async get(): Promise<Snapshot> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, ...value }) => ({ ...value, labels: { ...value.labels, ...sharedLabels } }));
    return data;
  }

  reset(): void {
    this.#series.clear();
  }
}
