// The pages an operator opens first in an incident: what failed, who is blocked, which instance is sick (ADR 0128).
import { api, may } from './api.js';
import { askInDialog, badge, bytes, h, reasonInput, showProblem, table, toast, when } from './ui.js';

const section = (title, ...content) => h('section', { class: 'card' }, h('h2', {}, title), ...content);
const STATE_KIND = { succeeded: 'good', running: 'good', queued: 'info', failed: 'bad' };
const state = (value) => badge(value ?? 'running', STATE_KIND[value ?? 'running'] ?? 'bad');
// An instance is sick when its heartbeat is late, its event loop lags or its pool makes queries wait.
const STALE_MS = 45_000;
const SLOW_LOOP_MS = 100;

async function showAttempts(run, into) {
  try {
    const detail = await api('GET', `/ops/jobs/runs/${encodeURIComponent(run.id)}`);
    into.replaceChildren(
      h('h3', {}, `Run ${run.id} of ${run.job}: attempts`),
      detail.attempts.length === 0
        ? h('p', { class: 'hint' }, 'No attempt recorded.')
        : table(detail.attempts, [
            ['Attempt', (a) => String(a.attempt)],
            ['Outcome', (a) => state(a.outcome)],
            ['Instance', (a) => h('code', {}, a.instance_id)],
            ['Started', (a) => when(a.started_at)],
            ['Took', (a) => (a.duration_ms === null ? '—' : `${a.duration_ms} ms`)],
            ['Error', (a) => a.error ?? ''],
          ], (a) => ({ 'data-attempt': String(a.attempt) })),
    );
  } catch (error) {
    showProblem(error, into);
  }
}

async function retry(run, refresh) {
  const done = await askInDialog(`Retry run ${run.id} of ${run.job}`, [['reason', 'Reason', reasonInput()]], ({ reason }) =>
    api('POST', `/ops/jobs/runs/${encodeURIComponent(run.id)}/retry`, { reason }),
  );
  if (done) {
    toast(`A new run of ${run.job} is queued`);
    refresh();
  }
}

/** Runs newest first, failed ones marked, a run's attempts and the retry of a failed one. */
export async function runsSection(refresh) {
  const { runs } = await api('GET', '/ops/jobs/runs?limit=30');
  const panel = h('div', { id: 'run-attempts' });
  return section(
    'Runs, newest first',
    table(runs, [
      ['Run', (r) => h('code', {}, r.id)],
      ['Job', (r) => h('strong', {}, r.job)],
      ['State', (r) => state(r.state)],
      ['Attempts', (r) => `${r.attempts} of ${r.max_attempts}`],
      ['Created', (r) => when(r.created_at)],
      ['Error', (r) => r.error ?? ''],
      [
        '',
        (r) =>
          h(
            'div',
            { class: 'actions' },
            h('button', { type: 'button', 'data-action': 'attempts', onclick: () => showAttempts(r, panel) }, 'Attempts'),
            r.state === 'failed' && may('ops.jobs.run') ? h('button', { type: 'button', 'data-action': 'retry', onclick: () => retry(r, refresh) }, 'Retry') : '',
          ),
      ],
    ], (r) => ({ 'data-run': r.id, class: r.state === 'failed' ? 'failed' : '' })),
    panel,
  );
}

/** Who is blocked: the limits covering an email and/or an address, and clearing them. */
export async function limitsLookupSection() {
  const result = h('div', { id: 'limits-result' });
  const form = h(
    'form',
    { id: 'limits-form', class: 'stack' },
    h('label', {}, 'Email ', h('input', { name: 'email', type: 'text', maxlength: 320, placeholder: 'as typed at sign-in' })),
    h('label', {}, 'Address ', h('input', { name: 'address', type: 'text', maxlength: 100, placeholder: 'client IP address' })),
    h('button', { type: 'submit', 'data-action': 'lookup' }, 'Look up'),
  );
  const subject = () => {
    const query = new URLSearchParams();
    for (const field of ['email', 'address']) {
      const value = form.elements[field].value.trim();
      if (value) {
        query.set(field, value);
      }
    }
    return query.toString();
  };
  const show = (limiters, query) => {
    const blocked = limiters.some((l) => l.blocked);
    result.replaceChildren(
      h('p', { class: blocked ? 'banner bad' : 'banner good', id: 'limits-state' }, blocked ? 'Blocked' : 'Not blocked'),
      table(limiters, [
        ['Limiter', (l) => h('strong', {}, l.limiter)],
        ['Covers', (l) => l.covers.replaceAll('_', ' ')],
        ['Left', (l) => `${l.remaining} of ${l.limit} per ${l.period_seconds} s`],
        ['Blocked', (l) => (l.blocked ? badge('blocked', 'bad') : badge('no', 'good'))],
        ['Until', (l) => when(l.blocked_until)],
        ['Full again', (l) => when(l.full_at)],
      ], (l) => ({ 'data-limiter': l.limiter })),
      may('ops.ratelimits.write')
        ? h('button', { type: 'button', class: 'danger', 'data-action': 'clear-limits', onclick: () => clear(query) }, 'Clear these limits')
        : '',
    );
  };
  const clear = async (query) => {
    const answer = await askInDialog('Clear the limits', [['reason', 'Reason', reasonInput()]], ({ reason }) => api('DELETE', `/ops/ratelimits?${query}`, { reason }));
    if (answer) {
      toast('Limits cleared on every instance');
      show(answer.limiters, query);
    }
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const query = subject();
    try {
      show((await api('GET', `/ops/ratelimits?${query}`)).limiters, query);
    } catch (error) {
      result.replaceChildren();
      showProblem(error, result);
    }
  });
  return section('Who is blocked', form, result);
}

async function changeAccount(account, action, refresh) {
  const done = await askInDialog(`${action === 'lock' ? 'Lock' : 'Unlock'} ${account.email}`, [['reason', 'Reason', reasonInput()]], ({ reason }) =>
    api('POST', `/ops/accounts/${encodeURIComponent(account.id)}/${action}`, { reason }),
  );
  if (done) {
    toast(`${account.email} ${action}ed`);
    refresh();
  }
}

async function grantRole(account, roles, refresh) {
  const select = h('select', {}, ...roles.filter((role) => !account.roles.includes(role.name)).map((role) => h('option', { value: role.name }, role.name)));
  const done = await askInDialog(`Grant a role to ${account.email}`, [['role', 'Role', select], ['reason', 'Reason', reasonInput()]], ({ role, reason }) =>
    api('PUT', `/ops/accounts/${encodeURIComponent(account.id)}/roles/${encodeURIComponent(role)}`, { reason }),
  );
  if (done) {
    toast(`Role granted to ${account.email}`);
    refresh();
  }
}

async function revokeRole(account, role, refresh) {
  const done = await askInDialog(`Take ${role} from ${account.email}`, [['reason', 'Reason', reasonInput()]], ({ reason }) =>
    api('DELETE', `/ops/accounts/${encodeURIComponent(account.id)}/roles/${encodeURIComponent(role)}`, { reason }),
  );
  if (done) {
    toast(`${role} taken from ${account.email}`);
    refresh();
  }
}

let accountFilter = '';

/** Accounts and their roles: lock and unlock with a reason, grant and take roles (the server refuses what the operator does not hold). */
export async function accountsPage(refresh) {
  const [{ accounts }, roles] = await Promise.all([
    api('GET', `/ops/accounts?limit=200${accountFilter ? `&email=${encodeURIComponent(accountFilter)}` : ''}`),
    may('ops.roles.read') && may('ops.roles.write') ? api('GET', '/ops/roles').then((answer) => answer.roles) : [],
  ]);
  const filter = h('form', { id: 'accounts-filter', class: 'stack' }, h('label', {}, 'Email contains ', h('input', { name: 'email', value: accountFilter })), h('button', { type: 'submit' }, 'Filter'));
  filter.addEventListener('submit', (event) => {
    event.preventDefault();
    accountFilter = filter.elements.email.value.trim();
    refresh();
  });
  return [
    section(
      'Accounts and roles',
      filter,
      table(accounts, [
        ['Email', (a) => h('strong', {}, a.email)],
        [
          'Roles',
          (a) =>
            h('div', { class: 'actions' }, ...(a.roles.length ? a.roles.map((role) => (may('ops.roles.write') ? h('button', { type: 'button', 'data-action': 'revoke', title: 'Take this role', onclick: () => revokeRole(a, role, refresh) }, `${role} ✕`) : h('code', {}, role))) : ['—'])),
        ],
        ['Locked', (a) => (a.locked ? [badge('locked', 'bad'), ' ', when(a.locked_at)] : badge('no', 'good'))],
        ['Created', (a) => when(a.created_at)],
        [
          '',
          (a) =>
            h(
              'div',
              { class: 'actions' },
              may('ops.accounts.write') ? h('button', { type: 'button', 'data-action': a.locked ? 'unlock' : 'lock', onclick: () => changeAccount(a, a.locked ? 'unlock' : 'lock', refresh) }, a.locked ? 'Unlock' : 'Lock') : '',
              roles.length ? h('button', { type: 'button', 'data-action': 'grant', onclick: () => grantRole(a, roles, refresh) }, 'Grant role') : '',
            ),
        ],
      ], (a) => ({ 'data-account': a.email })),
    ),
  ];
}

/** Every running instance side by side; a late heartbeat, a lagging event loop or a waiting pool stands out. */
export function instancesSideBySide(instances) {
  const sick = (i) => {
    const reasons = [];
    if (Date.now() - Date.parse(i.last_seen_at) > STALE_MS) {
      reasons.push('heartbeat late');
    }
    if (i.runtime && i.runtime.event_loop_delay_p99_ms > SLOW_LOOP_MS) {
      reasons.push('event loop slow');
    }
    if (i.runtime && i.runtime.pool_waiting > 0) {
      reasons.push('pool waiting');
    }
    return reasons;
  };
  return table(instances, [
    ['Instance', (i) => h('code', {}, i.instance_id)],
    ['Version', (i) => i.runtime?.version ?? i.version],
    ['Health', (i) => (sick(i).length ? badge(sick(i).join(', '), 'bad') : badge('ok', 'good'))],
    ['Last heartbeat', (i) => when(i.last_seen_at)],
    ['Heap in use', (i) => (i.runtime ? bytes(i.runtime.heap_in_use_bytes) : '—')],
    ['Loop p99', (i) => (i.runtime ? `${i.runtime.event_loop_delay_p99_ms.toFixed(1)} ms` : '—')],
    ['Pool', (i) => (i.runtime ? `${i.runtime.pool_in_use} in use, ${i.runtime.pool_waiting} waiting` : '—')],
    ['Uptime', (i) => (i.runtime ? `${i.runtime.uptime_seconds} s` : '—')],
  ], (i) => ({ 'data-instance': i.instance_id, class: sick(i).length ? 'sick' : '' }));
}
