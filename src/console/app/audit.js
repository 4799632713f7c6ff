import { api } from './api.js';
import { h, showProblem, svg, table, when } from './ui.js';

const WINDOWS = [
  ['24h', 'Last 24 hours', 1],
  ['7d', 'Last 7 days', 7],
  ['30d', 'Last 30 days', 30],
];

/** Events per day as bars (the server lists every day of the window); drawn here, so nothing loads from elsewhere. */
function dayChart(groups) {
  const bars = groups.map((g) => ({ day: g.key, count: g.count }));
  const max = Math.max(1, ...bars.map((b) => b.count));
  const height = 120;
  // A few days draw as narrow bars, not as blocks the width of the page.
  const step = Math.min(60, 600 / bars.length);
  const width = Math.max(240, step * bars.length);
  return svg(
    'svg',
    { viewBox: `0 0 ${width} ${height + 20}`, width, height: height + 20, class: 'chart', role: 'img', 'aria-label': 'Audit events per day' },
    ...bars.flatMap((bar, i) => {
      const barHeight = Math.round((bar.count / max) * height);
      return [
        svg('rect', { x: i * step + 2, y: height - barHeight, width: Math.max(1, step - 4), height: barHeight, class: 'bar' }, svg('title', {}, `${bar.day}: ${bar.count}`)),
        bars.length <= 8 || i % Math.ceil(bars.length / 8) === 0 ? svg('text', { x: i * step + step / 2, y: height + 14, 'text-anchor': 'middle', class: 'axis' }, bar.day.slice(5)) : undefined,
      ].filter(Boolean);
    }),
    svg('text', { x: 4, y: 12, class: 'axis' }, `max ${max}`),
  );
}

const topList = (title, stats) =>
  h(
    'div',
    { class: 'top-list' },
    h('h3', {}, title),
    table(stats.groups.slice(0, 8), [
      ['', (g) => g.key],
      ['Events', (g) => String(g.count)],
    ]),
  );

export async function auditPage() {
  const windowSelect = h('select', { name: 'window' }, WINDOWS.map(([value, label]) => h('option', { value }, label)));
  const filters = h(
    'form',
    { class: 'filters', id: 'audit-filters' },
    h('label', {}, 'Window ', windowSelect),
    h('label', {}, 'Action prefix ', h('input', { name: 'action_prefix', placeholder: 'settings.', pattern: '[a-z][a-z0-9_.]*' })),
    h('label', {}, 'Outcome ', h('select', { name: 'outcome' }, ['', 'success', 'failure', 'denied'].map((o) => h('option', { value: o }, o || 'any')))),
    h('label', {}, 'Actor kind ', h('select', { name: 'actor_kind' }, ['', 'account', 'service', 'system', 'anonymous'].map((o) => h('option', { value: o }, o || 'any')))),
    h('button', { type: 'submit' }, 'Apply'),
  );
  const results = h('div', { id: 'audit-results' });
  const load = async () => {
    const days = WINDOWS.find(([value]) => value === windowSelect.value)[2];
    const to = new Date();
    const from = new Date(to.getTime() - days * 86_400_000);
    const query = new URLSearchParams({ from: from.toISOString(), to: to.toISOString() });
    for (const name of ['action_prefix', 'outcome', 'actor_kind']) {
      if (filters.elements[name].value) {
        query.set(name, filters.elements[name].value);
      }
    }
    const stats = (groupBy) => api('GET', `/ops/audit/stats?${query}&group_by=${groupBy}`);
    try {
      const [byDay, byAction, byActor, byOutcome, latest] = await Promise.all([
        stats('day'),
        stats('action'),
        stats('actor_kind'),
        stats('outcome'),
        api('GET', `/ops/audit?${query}&limit=50`),
      ]);
      results.replaceChildren(
        h('p', {}, `${byDay.total} events from ${from.toLocaleString()} to ${to.toLocaleString()}`),
        dayChart(byDay.groups),
        h('div', { class: 'tops' }, topList('Top actions', byAction), topList('Actors (by kind)', byActor), topList('Outcomes', byOutcome)),
        h('h3', {}, 'Latest events'),
        table(latest.events, [
          ['When', (e) => when(e.occurred_at)],
          ['Action', (e) => h('code', {}, e.action)],
          ['Outcome', (e) => e.outcome],
          ['Actor', (e) => `${e.actor.label || e.actor.id} (${e.actor.kind})`],
          ['Resource', (e) => `${e.resource.type} ${e.resource.id}`],
          ['Request', (e) => h('code', {}, e.request_id)],
        ]),
      );
    } catch (error) {
      showProblem(error, results);
    }
  };
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    void load();
  });
  await load();
  return [h('section', { class: 'card' }, h('h2', {}, 'Audit'), filters, results)];
}
