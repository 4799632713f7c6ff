import { z } from 'zod';
import { timestamp } from '../../platform/http/schemas.ts';
import type { RuntimeSnapshot } from './runtimeSnapshot.ts';

export const RuntimeSnapshotSchema = z
  .object({
    version: z.string().describe('The release the instance runs'),
    heap_in_use_bytes: z.number().int(),
    event_loop_delay_p99_ms: z.number().describe('Over the last heartbeat interval'),
    pool_in_use: z.number().int().describe('Database connections of the main pool serving a query'),
    pool_waiting: z.number().int().describe('Queries waiting for a connection of the main pool'),
    uptime_seconds: z.number().int(),
    taken_at: timestamp(),
  })
  .describe(
    "The instance's latest snapshot, written with its heartbeat; null for a stopped instance or before its first beat",
  ) satisfies z.ZodType<RuntimeSnapshot>;
