import Router from '@koa/router';
import type { z } from 'zod';
import type { Context, Middleware } from 'koa';
import { withDeadlineAt } from '../db/deadline.ts';
import type { Actor, Caller, RequestOrigin } from '../caller.ts';
import { type AnyRoute, type BoundRoute, Reply, koaPath, needsDatabase, requiresBearer } from './route.ts';
import { storableText } from './schemas.ts';
import { methodNotAllowed, notFound } from './errors.ts';
import { parseRequest } from './validate.ts';

/** How the router establishes and checks the caller; filled in by the auth module. */
export interface RouteGuard {
  authenticate(ctx: Context): Promise<Actor>;
  authorize(actor: Actor, permission: string): void | Promise<void>;
}

/**
 * Builds the Koa router from route definitions: authentication and the permission check come
 * first, then validation of params, query and body, then the handler. A route that needs the
 * database runs within the request deadline, counted from the request's arrival
 * (`ctx.state.deadlineAt`, set by the request frame): its waits for a connection and its
 * statements end there (503 database_unavailable).
 */
export function buildRouter(routes: BoundRoute[], guard: RouteGuard, options: { requestDeadlineMs: number }): Middleware[] {
  const router = new Router();
  const statics: StaticRoute[] = [];
  for (const { route, deps } of routes) {
    // Only the parts a route declares are read and checked: a route without input (the probes, most
    // reads) costs no query parsing and no validation.
    const parts = (['params', 'query', 'body'] as const).filter((part) => route[part] !== undefined);
    // A route whose only input is its query, called without one (probes, first pages), reuses the
    // parse of an empty query made here: no query parsing and no validation per call.
    const emptyQuery = parts.length === 1 && route.query ? parseEmptyQuery(route.query) : undefined;
    const handle = async (ctx: Context) => {
      if (requiresBearer(route)) {
        const actor = await guard.authenticate(ctx);
        ctx.state.actor = actor;
        if (route.permission) {
          await guard.authorize(actor, route.permission);
        }
      }
      const { params, query, body } =
        parts.length === 0
          ? NO_INPUT
          : emptyQuery && ctx.querystring === ''
            ? { params: undefined, query: { ...emptyQuery }, body: undefined }
            : parseRequest(parts.map((part) => [part, route[part], partOf(ctx, part)]));
      const result = await route.handler(new Input(params, query, body, deps, route, ctx));
      const answer = result instanceof Reply ? result : new Reply(result);
      ctx.status = answer.status ?? route.status ?? 200;
      // Straight onto Node's response: Koa's ctx.set copies its argument into arrays first, which
      // was a tenth of what a /readyz request allocated (bench/README.md, issue 33).
      for (const name in answer.headers) {
        ctx.res.setHeader(name, answer.headers[name]!);
      }
      if (answer.body !== undefined && ctx.status !== 204) {
        ctx.body = answer.body;
      }
    };
    const bounded = needsDatabase(route);
    const dispatch = (ctx: Context) => {
      ctx.state.routePattern = route.path;
      return bounded
        ? withDeadlineAt((ctx.state.deadlineAt as number | undefined) ?? performance.now() + options.requestDeadlineMs, () => handle(ctx))
        : handle(ctx);
    };
    router.register(koaPath(route.path), [route.method], dispatch);
    if (!route.path.includes('{') && route.params === undefined) {
      statics.push({ path: route.path, dispatch });
    }
  }
  const exact = exactRoutes(router, statics);
  const byPattern = router.routes() as unknown as Middleware;
  // A request for a fixed path as declared (the probes, most ops reads) goes straight to its route:
  // @koa/router would test every route's pattern and build a middleware chain for it. Anything
  // else (parameters, another case, a trailing slash) is the router's, which answers the same.
  const route: Middleware = (ctx, next) => {
    const dispatch = exact.get(`${ctx.method} ${ctx.path}`);
    return dispatch ? dispatch(ctx) : byPattern(ctx, next);
  };
  const allowed = router.allowedMethods();
  // Runs only when no route answered: 405 with Allow when the path exists, else 404.
  const unmatched: Middleware = async (ctx) => {
    // No route has this path at all (the router lists the ones that do): nothing to allow, 404.
    if (ctx.status === 404 && !(ctx as { matched?: unknown[] }).matched?.length) {
      throw notFound(`No route matches ${ctx.method} ${ctx.path}.`);
    }
    await (allowed as unknown as Middleware)(ctx, async () => undefined);
    if (ctx.status === 405 || ctx.status === 501) {
      const allow = ctx.response.get('Allow');
      throw methodNotAllowed(`${ctx.method} is not allowed here; allowed: ${allow}.`, allow);
    }
    if (ctx.status === 404) {
      throw notFound(`No route matches ${ctx.method} ${ctx.path}.`);
    }
  };
  return [route, unmatched];
}

interface StaticRoute {
  path: string;
  dispatch(ctx: Context): unknown;
}

/** `METHOD path` of each fixed path the router itself would give to that route first (HEAD too for GET). */
function exactRoutes(router: Router, statics: StaticRoute[]): Map<string, (ctx: Context) => unknown> {
  const exact = new Map<string, (ctx: Context) => unknown>();
  for (const { path, dispatch } of statics) {
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const first = router.match(path, method).pathAndMethod[0];
      if (first?.stack.includes(dispatch as never)) {
        exact.set(`${method} ${path}`, dispatch);
      }
    }
  }
  return exact;
}

const NO_INPUT = { params: undefined, query: undefined, body: undefined };

/** What validating an empty query gives (defaults filled in), or undefined when the schema refuses one. */
function parseEmptyQuery(schema: z.ZodType): Record<string, unknown> | undefined {
  try {
    const { query } = parseRequest([['query', schema, {}]]);
    return query !== null && typeof query === 'object' ? (query as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function partOf(ctx: Context, part: 'params' | 'query' | 'body'): unknown {
  return part === 'params' ? ctx.params : part === 'query' ? ctx.query : (ctx.request.body ?? {});
}

/**
 * A handler's input. A class, not an object literal: a getter in a literal made every request's
 * input a slow dictionary object, and the garbage it left cost a third of /livez's throughput.
 */
class Input {
  readonly params: unknown;
  readonly query: unknown;
  readonly body: unknown;
  readonly deps: unknown;
  /** An own function, not a method: handlers destructure it from their input. */
  readonly header: (name: string) => string;
  readonly #route: AnyRoute;
  readonly #ctx: Context;
  #origin: RequestOrigin | undefined;

  constructor(params: unknown, query: unknown, body: unknown, deps: unknown, route: AnyRoute, ctx: Context) {
    this.params = params;
    this.query = query;
    this.body = body;
    this.deps = deps;
    this.#route = route;
    this.#ctx = ctx;
    this.header = (name) => ctx.get(name);
  }

  /** Worked out when a handler first reads it (most never do): the User-Agent check is not free. */
  get origin(): RequestOrigin {
    return (this.#origin ??= requestOrigin(this.#ctx));
  }

  get caller(): Caller {
    const actor = this.#ctx.state.actor as Actor | undefined;
    if (!actor) {
      throw new Error(`${this.#route.method} ${this.#route.path} is public: it has no caller`);
    }
    return { actor, ...this.origin };
  }
}

function requestOrigin(ctx: Context): RequestOrigin {
  return {
    requestId: ctx.state.requestId as string,
    clientAddress: ctx.state.clientAddress as string,
    // Stored with audit events and sessions; HTTP parsers differ on what header bytes they let through.
    userAgent: storableText(ctx.get('User-Agent')),
  };
}
