// The API reference: reads the OpenAPI document this server serves and lists its operations by
// tag. Plain DOM, no dependency (ADR 0100, amended): text is never parsed as HTML.

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Builds an element; children are nodes or text. */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== false) {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  element.append(...children.flat().filter((child) => child !== undefined && child !== null && child !== false).map((child) => (child instanceof Node ? child : String(child))));
  return element;
}

/** Follows a local $ref (#/components/schemas/X). */
function resolve(document, schema) {
  if (schema && typeof schema.$ref === 'string' && schema.$ref.startsWith('#/')) {
    return schema.$ref.slice(2).split('/').reduce((node, key) => node?.[key], document) ?? {};
  }
  return schema ?? {};
}

/** A short type name: string, integer (int64), array of object, one of …. */
function typeOf(document, raw) {
  const schema = resolve(document, raw);
  if (schema.const !== undefined) {
    return JSON.stringify(schema.const);
  }
  if (schema.enum) {
    return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  }
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    return variants.map((variant) => typeOf(document, variant)).join(' | ');
  }
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'any');
  if (type === 'array') {
    return `array of ${typeOf(document, schema.items)}`;
  }
  return schema.format ? `${type} (${schema.format})` : type;
}

/** The fields of an object schema as a nested list, depth-limited so recursive schemas stay finite. */
function fields(document, raw, depth = 0) {
  let schema = resolve(document, raw);
  while (schema.type === 'array' && schema.items) {
    schema = resolve(document, schema.items);
  }
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0 || depth > 4) {
    return undefined;
  }
  const required = new Set(schema.required ?? []);
  return h(
    'ul',
    { class: 'fields' },
    properties.map(([name, property]) =>
      h(
        'li',
        {},
        h('code', {}, name),
        ' ',
        h('span', { class: 'type' }, typeOf(document, property)),
        required.has(name) ? h('span', { class: 'required' }, ' required') : undefined,
        resolve(document, property).description ? ` — ${resolve(document, property).description}` : undefined,
        fields(document, property, depth + 1),
      ),
    ),
  );
}

function example(value) {
  return value === undefined ? undefined : h('pre', { class: 'example' }, JSON.stringify(value, null, 2));
}

function parameters(document, operation) {
  const list = operation.parameters ?? [];
  if (list.length === 0) {
    return undefined;
  }
  return h(
    'section',
    {},
    h('h4', {}, 'Parameters'),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'In'), h('th', {}, 'Type'), h('th', {}, 'Description'))),
      h(
        'tbody',
        {},
        list.map((parameter) =>
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, parameter.name), parameter.required ? h('span', { class: 'required' }, ' required') : undefined),
            h('td', {}, parameter.in),
            h('td', {}, typeOf(document, parameter.schema)),
            h('td', {}, parameter.description ?? parameter.schema?.description ?? ''),
          ),
        ),
      ),
    ),
  );
}

function requestBody(document, operation) {
  const content = operation.requestBody?.content?.['application/json'];
  if (!content) {
    return undefined;
  }
  return h('section', {}, h('h4', {}, 'Request body (application/json)'), fields(document, content.schema), example(content.example));
}

function responses(document, operation) {
  return h(
    'section',
    {},
    h('h4', {}, 'Responses'),
    Object.entries(operation.responses ?? {}).map(([status, raw]) => {
      const response = resolve(document, raw);
      const [type, content] = Object.entries(response.content ?? {})[0] ?? [];
      return h(
        'details',
        { class: `response status-${status[0]}xx` },
        h('summary', {}, h('strong', {}, status), ` ${response.description ?? ''}`, type ? h('span', { class: 'type' }, ` ${type}`) : undefined),
        content ? fields(document, content.schema) : undefined,
        content ? example(content.example ?? Object.values(content.examples ?? {})[0]?.value) : undefined,
      );
    }),
  );
}

function operationBlock(document, path, method, operation) {
  const problems = operation['x-problem-codes'] ?? [];
  return h(
    'details',
    { class: `operation method-${method}`, id: operation.operationId, 'data-search': `${method} ${path} ${operation.summary}`.toLowerCase() },
    h('summary', {}, h('span', { class: 'method' }, method.toUpperCase()), ' ', h('code', { class: 'path' }, path), ' ', h('span', { class: 'summary' }, operation.summary)),
    operation.description ? h('p', {}, operation.description) : undefined,
    h(
      'p',
      { class: 'facts' },
      operation.security?.length ? 'Bearer token' : 'No token',
      operation['x-permission'] ? ['; permission ', h('code', {}, operation['x-permission'])] : undefined,
    ),
    parameters(document, operation),
    requestBody(document, operation),
    responses(document, operation),
    problems.length ? h('section', {}, h('h4', {}, 'Problem codes (application/problem+json)'), h('p', { class: 'codes' }, problems.map((code) => h('code', {}, code)))) : undefined,
  );
}

function render(document) {
  const byTag = new Map();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS.filter((name) => item[name])) {
      const tag = item[method].tags?.[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationBlock(document, path, method, item[method])]);
    }
  }
  const filter = h('input', { type: 'search', id: 'filter', placeholder: 'Filter operations', 'aria-label': 'Filter operations' });
  const sections = [...byTag].sort(([a], [b]) => a.localeCompare(b)).map(([tag, blocks]) => h('section', { class: 'tag', id: `tag-${tag}` }, h('h2', {}, tag), blocks));
  filter.addEventListener('input', () => {
    const words = filter.value.trim().toLowerCase();
    for (const block of window.document.querySelectorAll('.operation')) {
      block.hidden = words !== '' && !block.dataset.search.includes(words);
    }
  });
  const servers = (document.servers ?? []).map((server) => h('li', {}, h('code', {}, server.url), server.description ? ` — ${server.description}` : ''));
  return [
    h('h1', {}, `${document.info?.title ?? 'API'} ${document.info?.version ?? ''}`),
    document.info?.description ? h('p', {}, document.info.description) : undefined,
    servers.length ? h('ul', { class: 'servers' }, servers) : undefined,
    h('p', {}, 'Errors are application/problem+json with a stable ', h('code', {}, 'code'), '.'),
    filter,
    sections,
  ];
}

const root = window.document.getElementById('reference');
fetch('/openapi.json')
  .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`HTTP ${response.status}`))))
  .then((document) => root.replaceChildren(...render(document).flat().filter(Boolean)))
  .catch((error) => root.replaceChildren(h('p', { class: 'error' }, `The API document could not be loaded: ${error.message}`)));
