import { z } from 'zod';
import { timestamp } from '../../platform/http/schemas.ts';

const int32 = z.number().int().min(-2_147_483_648).max(2_147_483_647);

export const CheckResultSchema = z.object({
  name: z.string(),
  status: z.enum(['ok', 'error']),
  duration_ms: z.number().int(),
  error: z.string().optional(),
  since: timestamp().optional().describe('ISO 8601: since when a check that knows has been failing (e.g. `ratelimit`: deciding alone)'),
  last_ok_at: timestamp().optional().describe('RFC 3339: when the check last passed on this instance; absent until it has'),
});

export const SystemDescription = z.object({
  checks: z.array(CheckResultSchema),
  database: z.object({
    status: z.enum(['ok', 'error']),
    error: z.string().optional().describe("What failed; never the driver's own message"),
    ping_ms: z.number().int().describe("The database check's round trip in ms; while it fails, how long it ran before failing"),
    pool: z.object({
      acquires: z.number().int(),
      average_acquire_ms: z.number(),
      canceled_acquires: z.number().int(),
      empty_acquires: z.number().int().describe('Acquires that waited because no connection was idle'),
      idle: int32,
      in_use: int32,
      max: int32,
      total: int32,
    }),
    migrations: z.object({
      current: z.number().int().describe('Highest applied version'),
      latest: z.number().int().describe("Highest version in the application's migration files"),
      pending: z.number().int(),
      read_at: timestamp()
        .optional()
        .describe(
          'RFC 3339: when these counts were read. While the database cannot answer they are the last ones read; absent when this instance has read none yet (then current and pending are 0)',
        ),
    }),
  }),
  instance: z.object({
    id: z.string().describe('Random per process start; equals instance_id in GET /ops/releases/instances'),
    version: z.string(),
    commit: z.string().optional(),
    build_time: z.string().optional(),
    modified: z.boolean().describe('True when built with uncommitted changes'),
    started_at: timestamp(),
    uptime_seconds: z.number().int(),
  }),
  jobs: z.object({
    workers: z.number().int().describe('Job workers this instance runs'),
    queues: z.array(z.string()),
  }),
  runtime: z.object({
    go_version: z.string().describe('The runtime version (Node.js), under the name existing clients read'),
    gomaxprocs: z.number().int().describe('CPUs this process may use'),
    goroutines: z.number().int().describe('Active handles and requests keeping the event loop alive'),
    heap_in_use_bytes: z.number().int().min(0).describe('V8 heap in use'),
    gcs: z.number().int().min(0).max(2_147_483_647).describe('Garbage collections observed since start'),
    last_gc_pause_ms: z.number().describe('Duration of the last garbage collection'),
    event_loop_delay_p99_ms: z.number(),
    event_loop_utilization: z.number(),
    rss_bytes: z.number().int(),
  }),
});

export type SystemDescription = z.infer<typeof SystemDescription>;

export const ReadinessBody = z.object({
  status: z.enum(['ok', 'unavailable', 'shutting_down']),
  checks: z.array(CheckResultSchema).optional(),
});
