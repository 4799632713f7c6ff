import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../platform/packageRoot.ts';
import { API_INFO, apiDocument } from './modules.ts';

type Operation = { summary: string; description?: string; 'x-permission'?: string; security?: unknown[] };

function postmanCollection(document: { paths: Record<string, Record<string, Operation>> }, version: string): unknown {
  const items = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      request: {
        method: method.toUpperCase(),
        header: [],
        url: {
          raw: `{{base_url}}${path.replace(/\{(\w+)\}/g, ':$1')}`,
          host: ['{{base_url}}'],
          path: path.replace(/\{(\w+)\}/g, ':$1').split('/').filter(Boolean),
        },
        description: operation.summary,
        ...(operation.security && operation.security.length > 0 ? {} : { auth: { type: 'noauth' } }),
      },
    })),
  );
  return {
    info: { name: `${API_INFO.title} ${version}`, schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{token}}', type: 'string' }] },
    variable: [{ key: 'base_url', value: 'http://localhost:8080' }, { key: 'token', value: '' }],
    item: items,
  };
}

function llmsText(document: { paths: Record<string, Record<string, Operation>> }, version: string): string {
  const lines = [`# ${API_INFO.title} ${version}`, '', `> ${API_INFO.description}`, '', 'Errors are application/problem+json with a stable `code`.', '', '## Operations', ''];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const permission = operation['x-permission'] ? ` [${operation['x-permission']}]` : '';
      lines.push(`- ${method.toUpperCase()} ${path}${permission}: ${operation.summary}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** The generated files under api/: one generator, so they never disagree. */
export async function renderApiFiles(): Promise<Record<string, string>> {
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  const document = apiDocument(version) as {
    paths: Record<string, Record<string, Operation>>;
  };
  return {
    'openapi.json': JSON.stringify(document, null, 2) + '\n',
    'postman_collection.json': JSON.stringify(postmanCollection(document, version), null, 2) + '\n',
    'llms.txt': llmsText(document, version),
  };
}
