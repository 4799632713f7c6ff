import { z } from 'zod';
import { reply, routeDefiner } from '../../platform/http/route.ts';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** A self-contained page listing every operation: no CDN, so it works on a closed network. */
export function renderDocsPage(document: Record<string, unknown>): string {
  const paths = document.paths as Record<string, Record<string, { summary: string; 'x-permission'?: string }>>;
  const rows = Object.entries(paths)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(
        ([method, op]) =>
          `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(op.summary)}</td><td>${escapeHtml(op['x-permission'] ?? '')}</td></tr>`,
      ),
    )
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Backplane API</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}td,th{padding:.3rem .8rem;text-align:left;border-bottom:1px solid #ddd}</style>
</head><body><h1>Backplane API</h1><p>The full document: <a href="/openapi.json">/openapi.json</a>.</p>
<table><tr><th>Method</th><th>Path</th><th>Summary</th><th>Permission</th></tr>
${rows}
</table></body></html>`;
}

/** The document, built once from every module's routes on first use. */
export interface OpenApiRouteDeps {
  document: () => Record<string, unknown>;
}

const defineRoute = routeDefiner<OpenApiRouteDeps>();

export const openApiRoutes = [
  defineRoute({
    method: 'GET',
    path: '/openapi.json',
    needsDatabase: false,
    tag: 'meta',
    summary: 'The OpenAPI 3.1 document of this API',
    responses: { 200: z.record(z.string(), z.unknown()) },
    handler: ({ deps }) => deps.document(),
  }),
  defineRoute({
    method: 'GET',
    path: '/docs',
    needsDatabase: false,
    tag: 'meta',
    summary: 'A page listing every operation',
    responses: { 200: null },
    handler: ({ deps }) => reply(renderDocsPage(deps.document()), { headers: { 'Content-Type': 'text/html; charset=utf-8' } }),
  }),
];
