import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import pino from 'pino';
import { type HttpAppOptions, createHttpServer } from '../../src/app/http.ts';
import { browserPages } from '../../src/console/sites.ts';
import { unauthenticated } from '../../src/platform/http/errors.ts';

/** The browser pages on a server of their own, no route and no database: what they do not answer is the routes' 404. */
export async function servePages(beforeBody: HttpAppOptions['beforeBody'] = []): Promise<{ base: string; close: () => void }> {
  const server = createHttpServer({
    logger: pino({ level: 'silent' }),
    routes: [],
    guard: {
      authenticate: async () => {
        throw unauthenticated();
      },
      authorize: () => undefined,
    },
    statuses: [],
    metrics: { observe: () => undefined },
    bodyLimitBytes: 1024,
    pages: browserPages(),
    beforeBody,
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** A GET with the path sent as written: fetch would resolve `..` and re-encode before sending. */
export function getRaw(base: string, path: string): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    request(`${base}/`, { path, method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body }));
    })
      .on('error', reject)
      .end();
  });
}
