import { api, may } from './api.js';
import { askInDialog, badge, bytes, h, reasonInput, showProblem, table, toast, when } from './ui.js';
import { auditPage } from './audit.js';
import { accountsPage, instancesSideBySide, limitsLookupSection, runsSection } from './incidents.js';

const GOOD = new Set(['ok', 'succeeded', 'running', 'enabled']);
const ok = (status) => badge(status, GOOD.has(status) ? 'good' : status === 'queued' ? 'info' : 'bad');
const section = (title, ...content) => h('section', { class: 'card' }, h('h2', {}, title), ...content);
const denied = (permission) => h('p', { class: 'hint' }, `Your roles do not grant ${permission}.`);
const facts = (pairs) => h('dl', { class: 'facts' }, pairs.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));

async function instancesPage() {
  const parts = [];
  if (may('ops.releases.read')) {
    const { instances } = await api('GET', '/ops/releases/instances?running=true&limit=200');
    parts.push(
      section(
        `Instances (${instances.length} running)`,
        instancesSideBySide(instances),
      ),
    );
  } else {
    parts.push(section('Instances', denied('ops.releases.read')));
  }
  if (may('ops.system.read')) {
    const system = await api('GET', '/ops/system');
    const { instance, database, runtime } = system;
    const pool = database.pool;
    parts.push(
      section(
        'This instance (the one that answered)',
        facts([
          ['Id', h('code', { id: 'answering-instance' }, instance.id)],
          ['Version', `${instance.version}${instance.commit ? ` (${instance.commit.slice(0, 12)})` : ''}`],
          ['Started', when(instance.started_at)],
          ['Uptime', `${instance.uptime_seconds} s`],
        ]),
        h('h3', {}, 'Checks'),
        table(system.checks, [
          ['Check', (c) => c.name],
          ['Status', (c) => ok(c.status)],
          ['Took', (c) => `${c.duration_ms} ms`],
          ['Detail', (c) => [c.error ?? '', c.since ? ` since ${new Date(c.since).toISOString()}` : ''].join('')],
        ]),
        h('h3', {}, 'Database'),
        facts([
          ['Status', ok(database.status)],
          ['Ping', `${database.ping_ms} ms`],
          ['Migrations', database.migrations ? `${database.migrations.current} of ${database.migrations.latest} (${database.migrations.pending} pending)` : '—'],
          ['Pool', `${pool.in_use} in use, ${pool.idle} idle, ${pool.total}/${pool.max}; ${pool.empty_acquires} waits of ${pool.acquires}, avg ${pool.average_acquire_ms.toFixed(1)} ms`],
        ]),
        h('h3', {}, 'Runtime'),
        facts([
          ['Node.js', runtime.go_version],
          ['Heap in use', bytes(runtime.heap_in_use_bytes)],
          ['RSS', bytes(runtime.rss_bytes)],
          ['GC', `${runtime.gcs} collections, last pause ${runtime.last_gc_pause_ms.toFixed(1)} ms`],
          ['Event loop', `p99 delay ${runtime.event_loop_delay_p99_ms.toFixed(1)} ms, utilisation ${(runtime.event_loop_utilization * 100).toFixed(0)} %`],
          ['Active handles', runtime.goroutines],
        ]),
      ),
    );
  }
  return parts;
}

async function jobsPage(refresh) {
  const { jobs } = await api('GET', '/ops/jobs/overview');
  const run = async (job) => {
    try {
      await api('POST', `/ops/jobs/definitions/${encodeURIComponent(job.name)}/run`);
      toast(`Run of ${job.name} queued`);
      refresh();
    } catch (error) {
      showProblem(error);
    }
  };
  const toggle = async (job) => {
    const enabled = !job.enabled;
    const done = await askInDialog(`${enabled ? 'Enable' : 'Disable'} ${job.name}`, [['reason', 'Reason', reasonInput()]], ({ reason }) =>
      api('PUT', `/ops/jobs/definitions/${encodeURIComponent(job.name)}`, { enabled, reason }),
    );
    if (done) {
      toast(`${job.name} ${enabled ? 'enabled' : 'disabled'}`);
      refresh();
    }
  };
  return [
    section(
      'Jobs',
      table(jobs, [
        ['Job', (j) => h('strong', {}, j.name)],
        ['Schedule', (j) => h('code', {}, j.schedule)],
        ['Enabled', (j) => ok(j.enabled ? 'enabled' : 'disabled')],
        ['Last run', (j) => (j.last_run ? [ok(j.last_run.state), ' ', when(j.last_run.finished_at ?? j.last_run.started_at), j.last_run.error ? h('div', { class: 'hint' }, j.last_run.error) : ''] : '—')],
        ['Next run', (j) => when(j.next_run_at)],
        ['Failed (24 h)', (j) => String(j.last_24h.failed)],
        ['Backlog', (j) => (j.backlog ? `${j.backlog.depth} waiting, ${j.backlog.due} due` : '—')],
        [
          'Actions',
          (j) =>
            h(
              'div',
              { class: 'actions' },
              may('ops.jobs.run') ? h('button', { type: 'button', 'data-action': 'run', onclick: () => run(j) }, 'Run now') : '',
              may('ops.jobs.write') ? h('button', { type: 'button', 'data-action': 'toggle', onclick: () => toggle(j) }, j.enabled ? 'Disable' : 'Enable') : '',
            ),
        ],
      ], (j) => ({ 'data-job': j.name })),
    ),
    await runsSection(refresh),
  ];
}

function valueInput(setting) {
  if (setting.kind === 'boolean') {
    return h('select', {}, h('option', { value: 'true', selected: setting.value === true }, 'true'), h('option', { value: 'false', selected: setting.value === false }, 'false'));
  }
  const bounds = setting.bounds;
  return h('input', {
    value: String(setting.value),
    type: setting.kind === 'integer' ? 'number' : 'text',
    min: setting.kind === 'integer' ? bounds.min : undefined,
    max: setting.kind === 'integer' ? bounds.max : undefined,
    maxlength: bounds.max_length,
  });
}

const parseValue = (setting, text) => (setting.kind === 'boolean' ? text === 'true' : setting.kind === 'integer' ? Number(text) : text);
const boundsText = (bounds) => Object.entries(bounds).filter(([key]) => !key.endsWith('_seconds')).map(([key, value]) => `${key} ${value}`).join(', ') || '—';

/** Edits one setting in a dialog: the version read goes along, so a concurrent change is refused (409). */
export async function editSetting(setting, refresh) {
  const done = await askInDialog(`Change ${setting.name}`, [['value', 'Value', valueInput(setting)], ['reason', 'Reason', reasonInput()]], ({ value, reason }) =>
    api('PUT', `/ops/settings/${encodeURIComponent(setting.name)}`, { value: parseValue(setting, value), reason, version: setting.version }),
  );
  if (done) {
    toast(`${setting.name} changed`);
    refresh();
  }
}

async function showHistory(setting, into) {
  try {
    const { changes } = await api('GET', `/ops/settings/${encodeURIComponent(setting.name)}/history?limit=20`);
    into.replaceChildren(
      h('h3', {}, `History of ${setting.name}`),
      changes.length === 0
        ? h('p', { class: 'hint' }, 'Never changed.')
        : table(changes, [
            ['When', (c) => when(c.changed_at)],
            ['Version', (c) => String(c.version)],
            ['From', (c) => h('code', {}, String(c.old_value))],
            ['To', (c) => h('code', {}, String(c.new_value))],
            ['By', (c) => c.actor.label],
            ['Reason', (c) => c.reason],
          ]),
    );
    into.scrollIntoView({ block: 'nearest' });
  } catch (error) {
    showProblem(error, into);
  }
}

export function settingsTable(settings, refresh, historyPanel) {
  return table(settings, [
    ['Setting', (s) => [h('strong', {}, s.name), h('div', { class: 'hint' }, s.description)]],
    ['Value', (s) => [h('code', { class: 'value' }, String(s.value)), s.modified ? badge('changed', 'info') : '', s.invalid_stored_value ? badge('stored value invalid', 'bad') : '']],
    ['Default', (s) => h('code', {}, String(s.default))],
    ['Bounds', (s) => boundsText(s.bounds)],
    ['Version', (s) => String(s.version)],
    ['Updated', (s) => (s.updated_at ? [when(s.updated_at), h('div', { class: 'hint' }, s.updated_by ?? '')] : '—')],
    [
      '',
      (s) =>
        h(
          'div',
          { class: 'actions' },
          historyPanel ? h('button', { type: 'button', 'data-action': 'history', onclick: () => showHistory(s, historyPanel) }, 'History') : '',
          may('ops.settings.write') ? h('button', { type: 'button', 'data-action': 'edit', onclick: () => editSetting(s, refresh) }, 'Edit') : '',
        ),
    ],
  ], (s) => ({ 'data-setting': s.name }));
}

async function settingsPage(refresh) {
  const { settings } = await api('GET', '/ops/settings');
  const history = h('div', { id: 'history' });
  return [section('Settings', may('ops.settings.write') ? '' : h('p', { class: 'hint' }, 'Read only: your roles do not grant ops.settings.write.'), settingsTable(settings, refresh, history), history)];
}

async function retentionPage() {
  const { kinds } = await api('GET', '/ops/retention');
  return [
    section(
      'Retention',
      table(kinds, [
        ['Kind', (k) => h('strong', {}, k.kind)],
        ['Kept for', (k) => [h('code', {}, k.value), h('div', { class: 'hint' }, k.setting)]],
        ['Cutoff', (k) => when(k.cutoff)],
        ['Oldest', (k) => when(k.oldest)],
        ['Past cutoff', (k) => String(k.past_cutoff)],
        ['Last run', (k) => (k.last_run ? [ok(k.last_run.state), ' ', when(k.last_run.finished_at ?? k.last_run.started_at)] : '—')],
        ['Next run', (k) => (k.enabled ? when(k.next_run) : badge(`${k.job} disabled`, 'bad'))],
      ]),
    ),
  ];
}

async function maintenancePage(refresh) {
  const { settings } = await api('GET', '/ops/settings?group=maintenance');
  const byName = Object.fromEntries(settings.map((s) => [s.name, s]));
  const enabled = byName['maintenance.enabled'];
  const state = h('p', { id: 'maintenance-state', class: enabled.value ? 'banner bad' : 'banner good' }, enabled.value ? 'Maintenance is ON: clients get 503 maintenance.' : 'Maintenance is off.');
  const problem = h('div');
  const message = byName['maintenance.message'];
  const retry = byName['maintenance.retry_after'];
  const reasonField = reasonInput();
  reasonField.name = 'reason';
  const form = h(
    'form',
    { id: 'maintenance-form', class: 'stack' },
    h('label', {}, 'Message ', h('input', { name: 'message', value: message.value, maxlength: message.bounds.max_length })),
    h('label', {}, 'Retry after ', h('input', { name: 'retry_after', value: retry.value, placeholder: 'e.g. 5m' })),
    h('label', {}, 'Reason ', reasonField),
    problem,
    h('button', { type: 'submit', class: enabled.value ? 'primary' : 'danger', 'data-action': 'maintenance' }, enabled.value ? 'Switch maintenance off' : 'Switch maintenance on'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const reason = reasonField.value;
    const put = (setting, value) => (setting.value === value ? undefined : api('PUT', `/ops/settings/${encodeURIComponent(setting.name)}`, { value, reason, version: setting.version }));
    try {
      // Message and delay first: clients refused from the first moment get the new ones.
      await put(message, form.elements.message.value);
      await put(retry, form.elements.retry_after.value);
      await put(enabled, !enabled.value);
      toast(enabled.value ? 'Maintenance switched off' : 'Maintenance switched on');
      refresh();
    } catch (error) {
      showProblem(error, problem);
    }
  });
  return [section('Maintenance mode', state, may('ops.settings.write') ? form : h('p', { class: 'hint' }, 'Read only: your roles do not grant ops.settings.write.'))];
}

async function rateLimitsPage(refresh) {
  const [{ settings }, system] = await Promise.all([api('GET', '/ops/settings?group=rate_limits'), may('ops.system.read') ? api('GET', '/ops/system') : undefined]);
  const check = system?.checks.find((c) => c.name === 'ratelimit');
  const alone = check
    ? check.status === 'ok'
      ? h('p', { id: 'ratelimit-state', class: 'banner good' }, `Instance ${system.instance.id} decides with the shared limits in PostgreSQL.`)
      : h('p', { id: 'ratelimit-state', class: 'banner bad' }, `Instance ${system.instance.id} decides alone${check.since ? ` since ${new Date(check.since).toISOString()}` : ''}: ${check.error ?? ''}`)
    : h('p', { class: 'hint' }, 'Whether an instance decides alone needs ops.system.read.');
  return [
    ...(may('ops.ratelimits.read') ? [await limitsLookupSection()] : []),
    section('Rate limits', alone, h('p', { class: 'hint' }, 'Refresh to ask again: each answer comes from whichever instance the connection reached.'), settingsTable(settings, refresh)),
  ];
}

/** Pages in the order of the navigation, each with the permission that shows it. */
export const PAGES = [
  { id: 'instances', title: 'Instances', permission: ['ops.releases.read', 'ops.system.read'], render: instancesPage, autoRefresh: true },
  { id: 'jobs', title: 'Jobs', permission: ['ops.jobs.read'], render: jobsPage, autoRefresh: true },
  { id: 'settings', title: 'Settings', permission: ['ops.settings.read'], render: settingsPage },
  { id: 'audit', title: 'Audit', permission: ['ops.audit.read'], render: auditPage },
  { id: 'retention', title: 'Retention', permission: ['ops.settings.read'], render: retentionPage },
  { id: 'maintenance', title: 'Maintenance', permission: ['ops.settings.read'], render: maintenancePage },
  { id: 'ratelimits', title: 'Rate limits', permission: ['ops.settings.read'], render: rateLimitsPage },
  { id: 'accounts', title: 'Accounts', permission: ['ops.accounts.read'], render: accountsPage },
];
