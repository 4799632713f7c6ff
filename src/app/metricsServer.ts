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
      .then(async (instances) => mergeExpositions(instances, await primary.metrics()))
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

/**
 * One exposition of both texts: a family both hold (process_*, nodejs_*) keeps one HELP and TYPE
 * with the samples of each, since a repeated family is invalid in the text format.
 */
export function mergeExpositions(...texts: string[]): string {
  const families = new Map<string, string[]>();
  for (const text of texts) {
    let current: string[] | undefined;
    for (const line of text.split('\n')) {
      const help = /^# HELP (\S+)/.exec(line);
      if (help) {
        current = families.get(help[1]!);
        if (current) {
          continue;
        }
        current = [];
        families.set(help[1]!, current);
      } else if (line.startsWith('# TYPE ') && current && current.length > 1) {
        continue;
      }
      if (line !== '' && current) {
        current.push(line);
      }
    }
  }
  return [...families.values()].map((lines) => lines.join('\n')).join('\n\n') + '\n';
}

/** In an instance: answer the primary's metric requests with this registry. */
export function reportMetricsToPrimary(registry: client.Registry): void {
  client.AggregatorRegistry.setRegistries([registry]);
  new client.AggregatorRegistry();
}
