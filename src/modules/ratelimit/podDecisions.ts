import type { Link } from '@opentelemetry/api';
import { type WaitingSpan, decideBatchTraced, receivedLinks } from './decisionSpans.ts';
import { mayStartStatement } from './flushes.ts';
import type { BucketOutcome, BucketRule, StatementRunner } from './store.ts';
import { takeFromBuckets } from './store.ts';

/** An instance's batch, sent to its pod's primary: keys are SHA-256 digests in hex. */
export interface PodTakeMessage {
  type: 'backplane:ratelimit:take';
  id: number;
  limiter: string;
  rule: BucketRule;
  keys: string[];
  hits: number[];
  /** The sampled `ratelimit decide` spans of the requests waiting on it, only when there are any. */
  waiting?: WaitingSpan[];
}

/** The primary's answer: one outcome per key of the batch, or why the statement failed. */
export interface PodTakenMessage {
  type: 'backplane:ratelimit:taken';
  id: number;
  outcomes?: BucketOutcome[];
  error?: string;
}

export interface PodDecisionOptions {
  /** The pod's decision pool; its size is the statements in flight. */
  db: StatementRunner;
  maxInFlight: number;
  /** Records one statement's keys (backplane_ratelimit_statement_keys). */
  sent(limiter: string, keys: number): void;
  maxBatchKeys?: number;
  parallelBatchKeys?: number;
  /** Least time between the starts of one limiter's statements (APP_RATELIMIT_SPACING_MS; ADR 0020). */
  statementSpacingMs: number;
  /** The pod's instances: once each has a batch here, no key can come before an answer, and none waits for the spacing. */
  instances: number;
}

export interface PodDecisions {
  /**
   * Decides one instance's batch with every other instance's of the same limiter and rule; `reply`
   * gets the answer once. `sender` names the instance (its worker id): it sends its next batch
   * only once answered.
   */
  take(message: PodTakeMessage, reply: (answer: PodTakenMessage) => void, sender: number): void;
}

interface Batch {
  message: PodTakeMessage;
  /** The instance that sent it, counted in `waitingBy` until answered; undefined for batches never counted (malformed, probes). */
  sender?: number;
  reply(answer: PodTakenMessage): void;
  outcomes: BucketOutcome[];
  /** Keys of this batch not decided yet. */
  waiting: number;
  answered: boolean;
}

/** One key as every instance asked for it: their hits in arrival order. */
interface MergedKey {
  key: Buffer;
  hits: number;
  parts: Array<{ batch: Batch; index: number; before: number }>;
}

interface Group {
  limiter: string;
  rule: BucketRule;
  pending: Map<string, MergedKey>;
  /** When its last statement left (performance.now()). */
  startedAt: number;
}

export const isPodTake = (message: unknown): message is PodTakeMessage =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'backplane:ratelimit:take';

const DIGEST_HEX = /^[0-9a-f]{64}$/;
const INT4_MAX = 2 ** 31 - 1;
// What ratelimit_take's int parameters hold: hits and burst are int, the interval and the
// tolerance (interval x burst) bigint; none of them 0, which the statement divides by.
const hitCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= INT4_MAX;
const positive = (value: unknown, max: number): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= max;

/** Instances are this code, but one malformed batch must not fail the statement it would join. */
function wellFormed(message: PodTakeMessage): boolean {
  const { rule, keys, hits } = message;
  return (
    typeof message.limiter === 'string' &&
    positive(rule?.burst, INT4_MAX) &&
    positive(rule?.intervalUs, Math.floor(Number.MAX_SAFE_INTEGER / rule.burst)) &&
    Array.isArray(keys) &&
    Array.isArray(hits) &&
    keys.length === hits.length &&
    keys.every((key) => typeof key === 'string' && DIGEST_HEX.test(key)) &&
    hits.every(hitCount) &&
    new Set(keys).size === keys.length
  );
}

/**
 * The pod's rate-limit decisions, run by the cluster primary for every instance it forked. The
 * database's cost is per statement (ADR 0020, "Who sends the statement"), so batches from all instances
 * of one limiter merge into one statement: a key asked by two instances is one row update whose
 * admitted hits go to the first asker's hits first. A limiter's statements start at least
 * `statementSpacingMs` apart while they would carry few keys: a key that arrives after a quiet
 * spell leaves at once, and under load a statement carries what every instance sent meanwhile, so
 * the pod's statements per second, not its instance count, bound what it costs the database. Once
 * `parallelBatchKeys` wait, or once every instance of the pod has a batch waiting here (each sends
 * its next only when answered, so nothing more can come), a statement leaves without waiting: at
 * saturation the spacing would only add latency. A second one may be in flight past
 * `parallelBatchKeys`.
 */
export function createPodDecisions(options: PodDecisionOptions): PodDecisions {
  const maxBatchKeys = options.maxBatchKeys ?? 1_000;
  const parallelBatchKeys = options.parallelBatchKeys ?? 32;
  const { statementSpacingMs } = options;
  const groups = new Map<string, Group>();
  /** Batches waiting for their answer, by instance. */
  const waitingBy = new Map<number, number>();
  let inFlight = 0;

  const answer = (batch: Batch, reply: Omit<PodTakenMessage, 'type' | 'id'>) => {
    if (!batch.answered) {
      batch.answered = true;
      if (batch.sender !== undefined) {
        const left = (waitingBy.get(batch.sender) ?? 1) - 1;
        if (left > 0) {
          waitingBy.set(batch.sender, left);
        } else {
          waitingBy.delete(batch.sender);
        }
      }
      batch.reply({ type: 'backplane:ratelimit:taken', id: batch.message.id, ...reply });
    }
  };

  const send = (group: Group) => {
    const merged: MergedKey[] = [];
    for (const [hex, entry] of group.pending) {
      group.pending.delete(hex);
      merged.push(entry);
      if (merged.length >= maxBatchKeys) {
        break;
      }
    }
    // Sorted keys lock rows in one order in every statement: concurrent statements cannot deadlock.
    merged.sort((a, b) => Buffer.compare(a.key, b.key));
    options.sent(group.limiter, merged.length);
    group.startedAt = performance.now();
    inFlight += 1;
    const keys = merged.map((entry) => entry.key);
    const hits = merged.map((entry) => entry.hits);
    const batches = new Set<Batch>();
    merged.forEach((entry) => entry.parts.forEach((part) => batches.add(part.batch)));
    let links: Link[] = [];
    for (const batch of batches) {
      if (Array.isArray(batch.message.waiting)) {
        links = links.concat(receivedLinks(batch.message.waiting));
      }
    }
    decideBatchTraced(group.limiter, merged.length, links, () => takeFromBuckets(options.db, group.rule, keys, hits), batches.size)
      .then(
        (outcomes) => {
          merged.forEach((entry, index) => {
            const { admitted, usedUs } = outcomes[index]!;
            for (const part of entry.parts) {
              part.batch.outcomes[part.index] = { admitted, usedUs, before: part.before };
              part.batch.waiting -= 1;
              if (part.batch.waiting === 0) {
                answer(part.batch, { outcomes: part.batch.outcomes });
              }
            }
          });
        },
        (error: unknown) => {
          const reason = error instanceof Error ? error.message : String(error);
          merged.forEach((entry) => entry.parts.forEach((part) => answer(part.batch, { error: reason })));
        },
      )
      .finally(() => {
        inFlight -= 1;
        flushSoon();
      });
  };

  // Every take and every answered statement looks again at once (a take may be the one that makes
  // every instance wait); what must wait for the spacing sets the one timer to the soonest moment.
  let looking = false;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    let soonest = Infinity;
    const everyInstanceWaits = waitingBy.size >= options.instances;
    for (const group of groups.values()) {
      while (mayStartStatement(group.pending.size, inFlight, options.maxInFlight, parallelBatchKeys)) {
        const early = group.startedAt + statementSpacingMs - performance.now();
        if (early > 0 && group.pending.size < parallelBatchKeys && !everyInstanceWaits) {
          soonest = Math.min(soonest, early);
          break;
        }
        send(group);
      }
    }
    clearTimeout(timer);
    timer = soonest < Infinity ? setTimeout(flush, Math.ceil(soonest)) : undefined;
  };
  const flushSoon = () => {
    if (!looking) {
      looking = true;
      setImmediate(() => {
        looking = false;
        flush();
      });
    }
  };

  const groupOf = (limiter: string, rule: BucketRule): Group => {
    // A limit changed in the settings reaches instances one by one: each rule has statements of its own.
    const id = `${limiter}\0${rule.intervalUs}\0${rule.burst}`;
    let group = groups.get(id);
    if (!group) {
      group = { limiter, rule: { intervalUs: rule.intervalUs, burst: rule.burst }, pending: new Map(), startedAt: -Infinity };
      groups.set(id, group);
    }
    return group;
  };

  return {
    take(message, reply, sender) {
      const batch: Batch = { message, reply, outcomes: [], waiting: 0, answered: false };
      if (!wellFormed(message)) {
        answer(batch, { error: 'malformed rate-limit batch' });
        return;
      }
      batch.waiting = message.keys.length;
      if (message.keys.length === 0) {
        // A probe or a warm-up: whether the database answers, through this pod's own connections.
        takeFromBuckets(options.db, message.rule, [], []).then(
          () => answer(batch, { outcomes: [] }),
          (error: unknown) => answer(batch, { error: error instanceof Error ? error.message : String(error) }),
        );
        return;
      }
      batch.sender = sender;
      waitingBy.set(sender, (waitingBy.get(sender) ?? 0) + 1);
      const group = groupOf(message.limiter, message.rule);
      message.keys.forEach((hex, index) => {
        let entry = group.pending.get(hex);
        if (!entry) {
          entry = { key: Buffer.from(hex, 'hex'), hits: 0, parts: [] };
          group.pending.set(hex, entry);
        }
        entry.parts.push({ batch, index, before: entry.hits });
        entry.hits += message.hits[index]!;
      });
      flushSoon();
    },
  };
}
