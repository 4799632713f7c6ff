import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { getRaw, servePages } from './pagesServer.ts';

// Every alert's runbook_url leads to /docs/runbooks/<alert> (scripts/monitoring.mjs): each instance
// serves the runbooks of deploy/runbooks/, without the database, as escaped text in a strict page.
const root = join(import.meta.dirname, '..', '..');
const alerts = readdirSync(join(root, 'deploy', 'runbooks'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => name.slice(0, -3));
let pages: Awaited<ReturnType<typeof servePages>>;

test.before(async () => {
  pages = await servePages();
});
test.after.always(() => pages?.close());

const unescape = (html: string) => html.replace(/&#(\d+);/g, (_entity, code: string) => String.fromCharCode(Number(code)));

test("GET /docs/runbooks lists every runbook, linked by its alert's name", async (t) => {
  t.true(alerts.length > 10);
  for (const path of ['/docs/runbooks', '/docs/runbooks/']) {
    const response = await fetch(`${pages.base}${path}`);
    t.is(response.status, 200);
    t.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
    const links = [...(await response.text()).matchAll(/href="\/docs\/runbooks\/([A-Za-z]+)"/g)].map((match) => match[1]);
    t.deepEqual(links, [...alerts].sort());
  }
});

for (const alert of alerts) {
  test(`GET /docs/runbooks/${alert}: the runbook, escaped, under the strict policy`, async (t) => {
    const response = await fetch(`${pages.base}/docs/runbooks/${alert}`);
    t.is(response.status, 200);
    t.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
    t.regex(response.headers.get('content-security-policy') ?? '', /default-src 'self'.*frame-ancestors 'none'/);
    t.is(response.headers.get('x-content-type-options'), 'nosniff');
    const html = await response.text();
    const text = /<pre class="example">([^]*)<\/pre>/.exec(html)?.[1] ?? '';
    // Nothing of the Markdown is markup: `<ns>` and the like are text.
    t.notRegex(text, /[<>"']/);
    t.is(unescape(text), readFileSync(join(root, 'deploy', 'runbooks', `${alert}.md`), 'utf8'));
    t.notRegex(html, /<script|\sstyle=|\son[a-z]+=/i);
  });
}

test("an unknown runbook, and every way of naming another file, is the routes' 404 problem", async (t) => {
  const [alert] = alerts;
  const paths = [
    '/docs/runbooks/BackplaneNoSuchAlert',
    `/docs/runbooks/${alert}.md`,
    `/docs/runbooks/${alert}.html`,
    `/docs/runbooks/${alert!.toLowerCase()}`,
    `/docs/runbooks/${alert}/`,
    `/docs/runbooks/${alert}%00`,
    `/docs/runbooks/${alert}%2F..%2F..%2Fdocs.js`,
    '/docs/runbooks/../docs.js',
    '/docs/runbooks/..%2Fdocs.js',
    '/docs/runbooks/%2e%2e/%2e%2e/package.json',
    '/docs/runbooks/index.html',
    '/docs/runbooks//etc/passwd',
    '/docs/runbooks/%2Fetc%2Fpasswd',
  ];
  for (const path of paths) {
    const response = await getRaw(pages.base, path);
    t.is(response.status, 404, path);
    t.is(response.type, 'application/problem+json', path);
    t.is(JSON.parse(response.body).code, 'not_found', path);
  }
});
