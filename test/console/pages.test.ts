import test, { type ExecutionContext } from 'ava';
import { request } from 'node:http';
import { isOpenDuringMaintenance } from '../../src/modules/maintenance/index.ts';
import { servePages } from './pagesServer.ts';

// No database anywhere in this file: the pages must load while PostgreSQL is down.
let base: string;
let close: () => void;

test.before(async () => {
  // Maintenance refuses everything it does not know: the pages are answered before it.
  ({ base, close } = await servePages([
    async (ctx, next) => {
      if (!isOpenDuringMaintenance(ctx.method, ctx.path)) {
        ctx.status = 503;
        return;
      }
      await next();
    },
  ]));
});

test.after.always(() => close());

const strictPolicy = (t: ExecutionContext, response: Response) => {
  const csp = response.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'self'/);
  t.regex(csp, /script-src 'self'(;|$)/);
  t.regex(csp, /style-src 'self'(;|$)/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe-inline|unsafe-eval|https?:/);
  t.is(response.headers.get('x-content-type-options'), 'nosniff');
};

for (const [path, type] of [
  ['/console', 'text/html; charset=utf-8'],
  ['/console/', 'text/html; charset=utf-8'],
  ['/console/console.js', 'text/javascript; charset=utf-8'],
  ['/console/console.css', 'text/css; charset=utf-8'],
  ['/docs', 'text/html; charset=utf-8'],
  ['/docs/docs.js', 'text/javascript; charset=utf-8'],
  ['/docs/docs.css', 'text/css; charset=utf-8'],
] as const) {
  test(`GET ${path}: ${type}, a strict policy, revalidated by ETag`, async (t) => {
    const response = await fetch(`${base}${path}`);
    t.is(response.status, 200);
    t.is(response.headers.get('content-type'), type);
    t.is(response.headers.get('cache-control'), 'no-cache');
    strictPolicy(t, response);
    t.true((await response.arrayBuffer()).byteLength > 0);
    const etag = response.headers.get('etag')!;
    t.truthy(etag);
    const again = await fetch(`${base}${path}`, { headers: { 'If-None-Match': etag } });
    t.is(again.status, 304);
  });
}

test('pages load no script, style or font from elsewhere, and run no inline script', async (t) => {
  for (const path of ['/console', '/docs']) {
    const html = await (await fetch(`${base}${path}`)).text();
    t.notRegex(html, /<script>|<script [^>]*>[^<]/, path);
    t.notRegex(html, /<style|\sstyle=|\son[a-z]+=/i, path);
    t.notRegex(html, /(src|href)="(https?:)?\/\//, path);
  }
});

test('large files go compressed when the client accepts gzip; HEAD has no body', async (t) => {
  const raw = await fetch(`${base}/console/pages.js`, { headers: { 'Accept-Encoding': 'identity' } });
  t.is(raw.headers.get('content-encoding'), null);
  const size = (await raw.arrayBuffer()).byteLength;
  const compressed = await new Promise<{ encoding: string | undefined; length: number }>((resolve, reject) => {
    request(`${base}/console/pages.js`, { headers: { 'Accept-Encoding': 'gzip' } }, (response) => {
      let length = 0;
      response.on('data', (chunk: Buffer) => (length += chunk.length));
      response.on('end', () => resolve({ encoding: response.headers['content-encoding'], length }));
    })
      .on('error', reject)
      .end();
  });
  t.is(compressed.encoding, 'gzip');
  t.true(compressed.length < size / 2);
  const head = await fetch(`${base}/console`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is((await head.arrayBuffer()).byteLength, 0);
});

test('only the listed files exist: other paths and methods go on to the routes', async (t) => {
  for (const path of ['/console/../package.json', '/console/sites.ts', '/console/missing.js', '/docs/x', '/docs/index.html', '/console/%2e%2e/sites.ts']) {
    t.is((await fetch(`${base}${path}`)).status, 503, path);
  }
  t.is((await fetch(`${base}/console`, { method: 'POST' })).status, 503);
});
