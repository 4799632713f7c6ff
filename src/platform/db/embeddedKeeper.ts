import type { EmbeddedDatabase } from './embedded.ts';
import { type Claim, type Ownership, claimOwnership } from './embeddedOwnership.ts';
import type { EmbeddedServer } from './embeddedServer.ts';
import { livePostmaster, signalFastShutdown, stopPostmaster } from './postmaster.ts';

export interface SupervisionEvents {
  died(): void;
  restarting(attempt: number, delayMs: number, error?: unknown): void;
  restarted(attempt: number): void;
  /** This process owns the server from now on: the process that owned it (pid, when known) has exited. */
  tookOver(previousOwner: number | undefined): void;
}

/** One embedded server: its data folder, where it answers, and how to start it again there. */
export interface Place {
  clusterDir: string;
  url: string;
  adminUrl: string;
  makeServer(): Promise<() => EmbeddedServer>;
}

const CHECK_EVERY_MS = 1_000;
const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A server whose owner is another live process is restarted by that owner; this one steps in after these checks. */
const NOT_OURS_GRACE_CHECKS = 5;

/**
 * Holds a server for this process: stops it if this process owns it, and when asked, supervises
 * it (restarts it when its postmaster dies, takes ownership over when its owner has exited).
 * Ownership is the lock of embeddedOwnership.ts, taken again after each restart.
 */
export function keepServer(place: Place, claim: Claim, found: boolean): EmbeddedDatabase {
  let owns = claim.owned;
  let lock: Ownership | undefined = claim.owned ? claim.ownership : undefined;
  let otherOwner = claim.owned ? undefined : claim.owner;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let deadChecks = 0;

  const pause = (ms: number) =>
    new Promise<void>((resolvePause) => {
      wake = resolvePause;
      timer = setTimeout(resolvePause, ms);
    });
  // An exiting process cannot wait: it asks the server it owns for a fast shutdown and goes.
  const stopOnExit = () => {
    const postmaster = owns ? livePostmaster(place.clusterDir) : undefined;
    if (postmaster) {
      signalFastShutdown(postmaster.pid);
    }
  };
  process.on('exit', stopOnExit);

  /** Takes the lock if it is free: true when this process holds it, false when another does, undefined when the server did not answer. */
  const claimAgain = async (events?: SupervisionEvents): Promise<boolean | undefined> => {
    // A server not answering yet (starting, recovering) is claimed at a later check.
    const result = await claimOwnership(place.adminUrl).catch(() => undefined);
    if (!result) {
      return undefined;
    }
    await lock?.release();
    lock = undefined;
    if (result.owned) {
      if (!owns) {
        events?.tookOver(otherOwner);
      }
      owns = true;
      lock = result.ownership;
      otherOwner = undefined;
    } else {
      owns = false;
      otherOwner = result.owner;
    }
    return result.owned;
  };

  /** Starts the server again: whether this process holds its lock then (undefined: not answering yet), or 'not started' when another process started it meanwhile. */
  const restart = async (events: SupervisionEvents): Promise<boolean | undefined | 'not started'> => {
    events.restarting(1, RESTART_BASE_MS);
    await pause(RESTART_BASE_MS);
    for (let attempt = 1; !stopped; attempt += 1) {
      if (livePostmaster(place.clusterDir)) {
        return 'not started';
      }
      try {
        await (await place.makeServer())().start();
        // At once, not at the next check: meanwhile a command would find the server ownerless and stop it on exit.
        const claimed = await claimAgain();
        events.restarted(attempt);
        return claimed;
      } catch (error) {
        if (livePostmaster(place.clusterDir)) {
          return 'not started';
        }
        // Backends of the killed postmaster may still hold its shared memory for a moment.
        const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** attempt);
        events.restarting(attempt + 1, delay, error ?? new Error('postgres exited while starting'));
        await pause(delay);
      }
    }
    return 'not started';
  };

  const check = async (events: SupervisionEvents) => {
    if (livePostmaster(place.clusterDir)) {
      deadChecks = 0;
      if (!lock?.held()) {
        await claimAgain(events);
      }
      return;
    }
    deadChecks += 1;
    if (!owns && deadChecks < NOT_OURS_GRACE_CHECKS) {
      return;
    }
    events.died();
    const [owned, previousOwner] = [owns, otherOwner];
    const claimed = await restart(events);
    if (claimed !== 'not started' && claimed !== false) {
      // Started here: ours (a lock not taken yet is taken at the next check).
      owns = true;
      otherOwner = undefined;
      if (!owned) {
        events.tookOver(previousOwner);
      }
    }
    deadChecks = 0;
  };

  return {
    url: place.url,
    get owned() {
      return owns;
    },
    found,
    owner: otherOwner,
    supervise(events) {
      const next = () => {
        timer = setTimeout(() => {
          // A check never throws on its own; a throwing event handler must not end the supervision.
          ticking = check(events)
            .catch(() => undefined)
            .finally(() => {
              ticking = undefined;
              if (!stopped) {
                next();
              }
            });
        }, CHECK_EVERY_MS);
      };
      next();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await ticking;
      process.removeListener('exit', stopOnExit);
      try {
        // Restarted since this process took the lock (by a supervising sharer, say): stopped only if still ours.
        if (owns && !lock?.held() && livePostmaster(place.clusterDir)) {
          await claimAgain();
        }
        const postmaster = owns ? livePostmaster(place.clusterDir) : undefined;
        if (postmaster) {
          await stopPostmaster(postmaster.pid);
        }
      } finally {
        owns = false;
        await lock?.release();
        lock = undefined;
      }
    },
  };
}
