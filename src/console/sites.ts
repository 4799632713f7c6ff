import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { StaticSite } from '../platform/http/staticAssets.ts';

// Pages load nothing from elsewhere and run no inline code; nothing may frame them (clickjacking).
const STRICT = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The files beside this one: in src/ under tsx, in dist/ once built (scripts/build.mjs copies them). */
const here = import.meta.dirname;

/**
 * /console (the operations console), /docs (the API reference, our own small viewer of /openapi.json)
 * and /docs/runbooks (what each alert means: the pages scripts/monitoring.mjs makes of deploy/runbooks/,
 * where every alert's runbook_url leads). Each is a fixed list of files read at start: no client path
 * names a file, so `..`, encoded slashes or NUL find nothing and go on to the routes' 404.
 */
export function browserPages(): StaticSite[] {
  const consoleFiles = readdirSync(join(here, 'app')).filter((name) => name !== 'index.html');
  const runbooks = readdirSync(join(here, 'docs', 'runbooks')).filter((name) => name.endsWith('.html') && name !== 'index.html');
  return [
    {
      path: '/console',
      page: join(here, 'app', 'index.html'),
      files: Object.fromEntries(consoleFiles.map((name) => [name, join(here, 'app', name)])),
      contentSecurityPolicy: STRICT,
    },
    {
      path: '/docs',
      page: join(here, 'docs', 'index.html'),
      files: {
        'docs.js': join(here, 'docs', 'docs.js'),
        'docs.css': join(here, 'docs', 'docs.css'),
      },
      contentSecurityPolicy: STRICT,
    },
    {
      path: '/docs/runbooks',
      page: join(here, 'docs', 'runbooks', 'index.html'),
      // Served by the alert's name alone: /docs/runbooks/BackplaneTargetDown.
      files: Object.fromEntries(runbooks.map((name) => [name.slice(0, -'.html'.length), join(here, 'docs', 'runbooks', name)])),
      contentSecurityPolicy: STRICT,
    },
  ];
}
