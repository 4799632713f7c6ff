import { type Server, createServer } from 'node:http';
import client from 'prom-client';

const MAX_CONCURRENT_SCRAPES = 4;

/**
 * The primary's /metrics listener: every instance's registry, gathered over the cluster's IPC, then
 * the primary's own (its supervision counters). Never on the API port, and none of the API's middleware.
 */
export function serveClusterMetrics(port: number, host: string, primary: client.Registry): Promise<Server> {
  const aggregator = new client.AggregatorRegistry();
  let scraping = 0;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (scraping >= MAX_CONCURRENT_SCRAPES) {
      res.writeHead(503, { 'Content-Type': 'text/plain' }).end('too many concurrent scrapes\n');
      return;
    }
    scraping += 1;
    aggregator
      .clusterMetrics()
      .then(async (instances) => `${instances.trimEnd()}\n${await primary.metrics()}`)
      .then((text) => res.writeHead(200, { 'Content-Type': aggregator.contentType }).end(text))
      .catch(() => res.writeHead(503, { 'Content-Type': 'text/plain' }).end('an instance did not answer\n'))
      .finally(() => {
        scraping -= 1;
      });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** In an instance: answer the primary's metric requests with this registry. */
export function reportMetricsToPrimary(registry: client.Registry): void {
  client.AggregatorRegistry.setRegistries([registry]);
  new client.AggregatorRegistry();
}
