import pg from 'pg';
import type { Logger } from 'pino';

/** The instance's one LISTEN connection, shared by every module that follows a channel. */
export interface NotificationListener {
  /** Calls handler on each NOTIFY on channel; also calls onReconnect handlers after a reconnect. */
  listen(channel: string, handler: (payload: string) => void): void;
  /** Called once the connection is (re-)established, so caches can reload what they missed. */
  onConnected(handler: () => void): void;
  /**
   * Settles once the LISTEN of every channel asked for so far has run, so a load after it misses
   * no notification; at once while disconnected (onConnected handlers run after the reconnect).
   */
  listening(): Promise<void>;
  /** Whether the connection is up right now. */
  readonly connected: boolean;
  /** Closes the connection; the instance does it as it stops. */
  close(): Promise<void>;
}

const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]*$/;

/**
 * One dedicated connection per instance for LISTEN, re-established with backoff when it drops.
 * While it is down, callers keep serving their last known values.
 */
export function createNotificationListener(connectionString: string, logger: Logger): NotificationListener {
  const handlers = new Map<string, Array<(payload: string) => void>>();
  const connectedHandlers: Array<() => void> = [];
  let client: pg.Client | undefined;
  let connected = false;
  let closed = false;
  let retryMs = 250;
  let retryTimer: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    if (closed) {
      return;
    }
    const next = new pg.Client({ connectionString, connectionTimeoutMillis: 2_000, application_name: 'backplane-listener' });
    next.on('error', () => undefined);
    next.on('end', () => {
      if (client === next) {
        connected = false;
        client = undefined;
        scheduleReconnect();
      }
    });
    next.on('notification', (message) => {
      for (const handler of handlers.get(message.channel) ?? []) {
        handler(message.payload ?? '');
      }
    });
    try {
      await next.connect();
      for (const channel of handlers.keys()) {
        await next.query(`listen ${channel}`);
      }
      if (closed) {
        // Closed while this connection was being made: close() could not end it, so it ends here.
        await next.end().catch(() => undefined);
        return;
      }
      client = next;
      connected = true;
      if (retryMs > 250) {
        logger.info('notification listener reconnected');
      }
      retryMs = 250;
      for (const handler of connectedHandlers) {
        handler();
      }
    } catch {
      await next.end().catch(() => undefined);
      scheduleReconnect();
    }
  }

  function scheduleReconnect(): void {
    if (closed || retryTimer) {
      return;
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, 5_000);
  }

  let started = false;
  let pendingListen: Promise<void> = Promise.resolve();
  return {
    listen(channel, handler) {
      if (!CHANNEL_PATTERN.test(channel)) {
        throw new Error(`bad channel name ${channel}`);
      }
      const list = handlers.get(channel) ?? [];
      const isNew = list.length === 0;
      list.push(handler);
      handlers.set(channel, list);
      if (isNew && client && connected) {
        // One statement at a time on the connection: pg no longer queues overlapping queries quietly.
        const current = client;
        pendingListen = pendingListen
          .then(() => current.query(`listen ${channel}`))
          .then(
            () => undefined,
            () => undefined,
          );
      }
      if (!started) {
        started = true;
        void connect();
      }
    },
    onConnected(handler) {
      connectedHandlers.push(handler);
    },
    listening() {
      return pendingListen;
    },
    get connected() {
      return connected;
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
    },
  };
}
