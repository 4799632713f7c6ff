import { routeDefiner } from '../../platform/http/route.ts';
import { describeRetention } from './overview.ts';
import type { RetentionServiceDeps } from './ports.ts';
import { RetentionOverview } from './schemas.ts';

const defineRoute = routeDefiner<RetentionServiceDeps>();

export const retentionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/retention',
    permission: 'ops.settings.read',
    tag: 'ops',
    summary: 'Retention of each kind of data: its setting, the enforcing job, the oldest row and the rows past the cutoff',
    description:
      'Retention periods are runtime settings (`audit.retention`, `ops.history_retention`, `releases.instance_retention`), changed with ' +
      'PUT /ops/settings/{name}; the daily `retention` job applies their live values. The counts are exact except whole expired ' +
      'months of audit events, estimated from the catalogue (`past_cutoff_estimated`); every read is bounded by 5 s (503 `retention_query_timeout`).',
    responses: { 200: RetentionOverview },
    problems: ['retention_query_timeout'],
    handler: ({ deps }) => describeRetention(deps),
  }),
];
