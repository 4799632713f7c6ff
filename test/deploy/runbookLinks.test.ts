import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { servePages } from '../console/pagesServer.ts';
import { type Manifest, kitWithSecrets, kustomize, root } from './manifests.ts';

// The overlay's APP_PUBLIC_URL is the one place the runbooks' address is set: every alert's
// runbook_url and every link of the dashboard the kit ships must lead to a page the instances serve.
const PUBLIC_URL = 'https://ops.example.net/backplane';

function renderWithPublicUrl(): Manifest[] {
  const kit = kitWithSecrets();
  const overlay = join(kit, 'overlays', 'production', 'kustomization.yaml');
  const text = readFileSync(overlay, 'utf8');
  const edited = text.replace(/^(\s+- APP_PUBLIC_URL=).*$/m, `$1${PUBLIC_URL}`);
  if (edited === text) {
    throw new Error('the production overlay sets no APP_PUBLIC_URL');
  }
  writeFileSync(overlay, edited);
  return kustomize('overlays/production', kit);
}

interface Link {
  url: string;
}
const rendered = renderWithPublicUrl();
const rule = rendered.find((manifest) => manifest.kind === 'PrometheusRule') as unknown as {
  spec: { groups: { rules: { alert: string; annotations: Record<string, string> }[] }[] };
};
const alerts = rule.spec.groups.flatMap((group) => group.rules);
const dashboardMap = rendered.find((manifest) => manifest.metadata.labels?.grafana_dashboard === '1') as unknown as { data: Record<string, string> };
const dashboard = JSON.parse(dashboardMap.data['backplane.json']!) as {
  links: Link[];
  panels: { links?: Link[] }[];
  templating: { list: { name: string; query?: unknown }[] };
};
/** A dashboard link as Grafana opens it: `${backplane_url}` replaced by the variable's value. */
const opened = (link: Link) =>
  link.url.replaceAll('${backplane_url}', String(dashboard.templating.list.find((variable) => variable.name === 'backplane_url')?.query));
const dashboardUrls = [...dashboard.links, ...dashboard.panels.flatMap((panel) => panel.links ?? [])].map(opened);

/** The path under APP_PUBLIC_URL a link leads to; the link must start with it. */
const pathOf = (url: string) => {
  if (!url.startsWith(`${PUBLIC_URL}/`)) {
    throw new Error(`${url} is not under ${PUBLIC_URL}`);
  }
  return url.slice(PUBLIC_URL.length);
};

test('every runbook_url is <APP_PUBLIC_URL>/docs/runbooks/<the alert>, with a runbook of that name', (t) => {
  t.true(alerts.length > 10);
  for (const alert of alerts) {
    t.is(alert.annotations.runbook_url, `${PUBLIC_URL}/docs/runbooks/${alert.alert}`);
    t.true(existsSync(join(root, 'deploy', 'runbooks', `${alert.alert}.md`)), alert.alert);
  }
});

test('the dashboard is valid JSON, and every link it opens is under APP_PUBLIC_URL', (t) => {
  t.true(dashboardUrls.length > 5);
  t.deepEqual(
    dashboardUrls.filter((url) => !url.startsWith(`${PUBLIC_URL}/`)),
    [],
  );
  t.deepEqual(
    dashboardUrls.filter((url) => /^.+\/docs\/runbooks\/\w+$/.test(url) && !existsSync(join(root, 'deploy', 'runbooks', `${url.split('/').pop()}.md`))),
    [],
  );
});

test('an instance serves every page the alerts and the dashboard link to', async (t) => {
  const pages = await servePages();
  try {
    const paths = [...new Set([...alerts.map((alert) => alert.annotations.runbook_url!), ...dashboardUrls].map(pathOf))];
    t.true(paths.includes('/console') && paths.includes('/docs/runbooks'));
    for (const path of paths) {
      const response = await fetch(`${pages.base}${path}`);
      t.is(response.status, 200, path);
      t.is(response.headers.get('content-type'), 'text/html; charset=utf-8', path);
    }
  } finally {
    pages.close();
  }
});
