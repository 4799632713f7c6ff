import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context, Middleware, Next } from 'koa';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

/** A page and its files, answered from memory at fixed paths. */
export interface StaticSite {
  /** Served at `path` and `path/`: the page itself. */
  path: string;
  /** The page's HTML file. */
  page: string;
  /** Further files, served at `path/<name>`, by name → absolute file. */
  files: Record<string, string>;
  contentSecurityPolicy: string;
}

interface Asset {
  body: Buffer;
  gzipped: Buffer | undefined;
  type: string;
  etag: string;
  csp: string;
  /** The route pattern metrics and logs name (never the client's path). */
  pattern: string;
}

function loadAsset(file: string, csp: string, pattern: string): Asset {
  const body = readFileSync(file);
  const type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
  const compressible = /^(text\/|application\/json|image\/svg)/.test(type) && body.length > 1_024;
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, gzipped: compressible ? gzipSync(body) : undefined, type, etag, csp, pattern };
}

/**
 * Serves the browser pages (the console, the API reference) from memory, before maintenance mode
 * and without the database, so they load during an outage. Files are read once, at start-up: a
 * missing one stops the instance instead of failing a request later. Only the listed files exist;
 * every other path goes on to the routes.
 */
export function staticAssets(sites: StaticSite[]): Middleware {
  const assets = new Map<string, Asset>();
  for (const site of sites) {
    const page = loadAsset(site.page, site.contentSecurityPolicy, site.path);
    assets.set(site.path, page);
    assets.set(`${site.path}/`, page);
    for (const [name, file] of Object.entries(site.files)) {
      assets.set(`${site.path}/${name}`, loadAsset(file, site.contentSecurityPolicy, `${site.path}/{file}`));
    }
  }
  // Not async: the requests it passes on (nearly all) cost no promise and no microtask of their own.
  return function serveStaticAsset(ctx: Context, next: Next): Promise<void> | undefined {
    const asset = ctx.method === 'GET' || ctx.method === 'HEAD' ? assets.get(ctx.path) : undefined;
    if (!asset) {
      return next();
    }
    ctx.state.routePattern = asset.pattern;
    ctx.set('Content-Security-Policy', asset.csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    // Revalidated on every load (a 304 costs nothing): an upgrade's new files are never mixed with old ones.
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', asset.etag);
    ctx.set('Vary', 'Accept-Encoding');
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return undefined;
    }
    ctx.type = asset.type;
    if (asset.gzipped && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = asset.gzipped;
    } else {
      ctx.body = asset.body;
    }
    return undefined;
  };
}
