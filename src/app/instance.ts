import { type Server } from 'node:http';
import type client from 'prom-client';
import { browserPages } from '../console/sites.ts';
import type { RateLimitSettings, TakeBuckets } from '../modules/ratelimit/index.ts';
import { createClientAddressResolver } from '../platform/http/clientAddress.ts';
import { trackConnections } from '../platform/http/connections.ts';
import type { EarlyAnswer } from '../platform/http/requestFrame.ts';
import type { RouteGuard } from '../platform/http/router.ts';
import { createHttpMetrics } from '../platform/metrics/registry.ts';
import { flushTracing, startTracing } from '../platform/tracing/setup.ts';
import type { Config } from './config.ts';
import { createHttpServer } from './http.ts';
import { type Application, compose } from './application.ts';
import { createModules } from './modules.ts';
import { openPlatform } from './platform.ts';

/** An instance serving on its port, as startInstance and startTestInstance return it. */
export interface RunningInstance {
  /** Its instance id, as `/ops/system` and the instance list show it. */
  id: string;
  /** The HTTP server it answers on. */
  server: Server;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Its metrics registry. */
  registry: client.Registry;
  /** Stops accepting, lets in-flight requests finish (bounded), marks the instance stopped. */
  drain(options?: DrainOptions): Promise<void>;
}

/** How drain() ends the instance's connections. */
export interface DrainOptions {
  /**
   * Resolves once no new connection can reach this instance's port any more (in a cluster, when
   * every instance has stopped accepting). Until then keep-alive connections are kept alive: a
   * client told to reconnect would race the listener's close.
   */
  listenerClosed?: () => Promise<void>;
  /** How long a connection may stay idle before it is ended; min(5 s, half the drain timeout) unless given. */
  idleGraceMs?: number;
}

/** How long a connection may stay idle during a drain before it is ended (see trackConnections). */
const idleGraceMs = (drainTimeoutMs: number) => Math.min(5_000, drainTimeoutMs / 2);

/** One instance: the platform, then every module in order, then the HTTP server on the shared port. */
export async function startInstance(
  application: Application,
  config: Config,
  options: { workerSlot?: string; rateLimits?: RateLimitSettings; rateLimitTimeoutMs?: number; rateLimitPod?: TakeBuckets } = {},
): Promise<RunningInstance> {
  if (!config.databaseUrl) {
    throw new Error('an instance needs DATABASE_URL; `backplane serve` sets it for its instances');
  }
  const platform = openPlatform({ ...config, databaseUrl: config.databaseUrl }, { ...options, retention: compose(application).retention });
  const { logger, registry } = platform;
  await startTracing({ role: 'instance', instanceId: platform.instanceId });
  const modules = await createModules(application, config, platform, options).catch(async (error: unknown) => {
    await platform.close();
    throw error;
  });
  const clientAddress = createClientAddressResolver(config.trustedProxies);
  let closingConnections = false;
  const server = createHttpServer({
    logger,
    routes: modules.routes,
    guard: modules.api<{ guard: RouteGuard }>('auth').guard,
    statuses: [...compose(application).statuses],
    metrics: createHttpMetrics(registry),
    pages: browserPages(),
    bodyLimitBytes: config.bodyLimitBytes,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    requestDeadlineMs: config.requestDeadlineMs,
    draining: () => closingConnections,
    clientAddress: (request) => clientAddress.resolve(request.socket.remoteAddress, request.headers['x-forwarded-for']),
    trustedPeer: (request) => clientAddress.isTrustedPeer(request.socket.remoteAddress),
    // Each module's middleware by phase, in the application's order (ADR 0120).
    answerEarly: earlyAnswers(modules.middleware.flatMap((middleware) => (middleware.early ? [middleware.early] : []))),
    beforeBody: modules.middleware.flatMap((middleware) => middleware.beforeBody ?? []),
    aroundRouter: modules.middleware.flatMap((middleware) => middleware.aroundRouter ?? []),
  });
  const connections = trackConnections(server);
  const port = await listen(server, config);
  modules.start();
  logger.info({ port, version: platform.build.version, commit: platform.build.commit }, 'instance started');

  let draining: Promise<void> | undefined;
  const drain = (drainOptions: DrainOptions = {}) =>
    (draining ??= (async () => {
      logger.info('instance draining');
      const closed = connections.close();
      const timer = setTimeout(() => server.closeAllConnections(), config.drainTimeoutMs);
      const requestsDone = (async () => {
        // The drain timeout ends every connection, and so this wait, if the listener's close is never reported.
        await Promise.race([drainOptions.listenerClosed?.(), closed]);
        // From here every answer says Connection: close, and connections left idle are ended.
        closingConnections = true;
        connections.endIdleConnections(drainOptions.idleGraceMs ?? idleGraceMs(config.drainTimeoutMs));
        await closed;
      })();
      // Requests and modules' work (job runs) drain side by side, each within the drain timeout; /readyz fails from now on.
      await Promise.all([requestsDone, modules.drain(config.drainTimeoutMs)]);
      clearTimeout(timer);
      connections.stop();
      await modules.close();
      await platform.close();
      logger.info('instance stopped');
      await flushTracing();
    })());

  return { id: platform.instanceId, server, url: `http://127.0.0.1:${port}`, registry, drain };
}

/** The first early answer of the modules, in order; none when no module has one. */
function earlyAnswers(answers: EarlyAnswer[]): EarlyAnswer | undefined {
  return answers.length === 0 ? undefined : (request) => answers.reduce<ReturnType<EarlyAnswer>>((answer, next) => answer ?? next(request), undefined);
}

/** Listens on the configured port (0: any free one) and resolves with the port it got. */
async function listen(server: Server, config: Config): Promise<number> {
  server.listen({ port: config.port, host: config.host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : config.port;
}
