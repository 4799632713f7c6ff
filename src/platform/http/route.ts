import type { z } from 'zod';
import type { Caller, RequestOrigin } from '../caller.ts';
import type { StatusTable } from '../errors.ts';
import type { PlatformProblemCode } from './errors.ts';

/** The methods a route may answer. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A zod schema: a route's parameters, query, body and answers are declared with them. */
export type Schema = z.ZodType;
/** What a schema validates to; undefined for an input the route does not declare. */
export type Infer<S> = S extends Schema ? z.infer<S> : undefined;

/** What a handler is given: the validated input, its module's dependencies, and who calls from where. */
export interface HandlerInput<P, Q, B, D> {
  /** The path parameters, validated by the route's `params`. */
  params: Infer<P>;
  /** The query string, validated by the route's `query`. */
  query: Infer<Q>;
  /** The JSON body, validated by the route's `body`. */
  body: Infer<B>;
  /** The module's dependencies, given at call time: the route itself is static data. */
  deps: D;
  /** The signed-in caller; only routes that require a bearer have one (reading it elsewhere throws). */
  caller: Caller;
  /** Where the request came from, on every route (public ones too). */
  origin: RequestOrigin;
  /** A raw request header, for the few use cases that read one (Cookie, Authorization for linking). */
  header(name: string): string;
}

/** An answer whose status or headers depend on the outcome (201 or 200, Location, Set-Cookie). */
export class Reply {
  /** The answer's body, checked against the route's declared response. */
  readonly body: unknown;
  /** The status; the route's `status` when undefined. */
  readonly status: number | undefined;
  /** Headers sent with the answer. */
  readonly headers: Readonly<Record<string, string>>;

  /** Made by `reply`. */
  constructor(body: unknown, status?: number, headers: Readonly<Record<string, string>> = {}) {
    this.body = body;
    this.status = status;
    this.headers = headers;
  }
}

/** An answer whose status or headers the handler decides: `return reply(note, { status: 201, headers: { Location } })`. */
export const reply = (body: unknown, options: { status?: number; headers?: Record<string, string> } = {}) => new Reply(body, options.status, options.headers);

/** A route as data: the router and the OpenAPI document are both built from it. */
export interface RouteDefinition<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
  D = unknown,
> {
  /** The HTTP method. */
  method: HttpMethod;
  /** OpenAPI-style path: /ops/settings/{name}. */
  path: string;
  /** The document's tag, one per module or resource. */
  tag: string;
  /** One line for the document. */
  summary: string;
  /** Longer text for the document. */
  description?: string;
  /** Permission the bearer must hold; implies bearer authentication. */
  permission?: string;
  /** 'bearer' for routes that need a signed-in caller but no permission. */
  auth?: 'public' | 'bearer';
  /** Schema of the path parameters. */
  params?: P;
  /** Schema of the query string. */
  query?: Q;
  /** Schema of the JSON body. */
  body?: B;
  /** Status of a successful answer (200 by default). */
  status?: number;
  /** Status → schema of each successful answer (null for one without a body); answers are checked against them in tests. */
  responses: Record<number, Schema | null>;
  /** Problem codes this route may answer with, for the document. */
  problems?: string[];
  /**
   * False for a route that answers without waiting on the database (from memory, or reporting the
   * database's state itself): it runs without the request deadline and never answers 503
   * database_unavailable. Every other route gets both, and its document says so.
   */
  needsDatabase?: false;
  /** Returns the body, or a Reply when the status or headers depend on the outcome. */
  handler: (input: HandlerInput<P, Q, B, D>) => unknown;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route list mixes every module's dependency type
export type AnyRoute = RouteDefinition<Schema | undefined, Schema | undefined, Schema | undefined, any>;

/** A module's route with the dependencies its handler will be given. */
export interface BoundRoute {
  route: AnyRoute;
  deps: unknown;
}

/**
 * Declares routes as data for a module whose handlers receive `D`: the router and the OpenAPI
 * document are both built from them, the document without any dependency.
 */
export function routeDefiner<D = undefined>() {
  // The permission's literal is kept, so a module's declared permissions can check it (ADR 0120).
  return <
    P extends Schema | undefined = undefined,
    Q extends Schema | undefined = undefined,
    B extends Schema | undefined = undefined,
    Permission extends string = never,
  >(
    route: Omit<RouteDefinition<P, Q, B, D>, 'permission'> & { permission?: Permission },
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the input types stay with the handler
  ): RouteDefinition<any, any, any, D> & { permission?: Permission } => route as unknown as RouteDefinition<any, any, any, D> & { permission?: Permission };
}

/**
 * Declares routes like `routeDefiner`, for a module whose handlers receive `D` and that answers
 * with the codes of `Statuses` (`typeof` its `statuses` table): a problem code that is neither one
 * of those nor the platform's does not compile, nor does a permission its module does not declare.
 * A route answering with another module's code names that table too (`typeof a & typeof b`).
 */
export function moduleRouteDefiner<D = undefined, Statuses extends StatusTable = Record<never, number>>() {
  return <
    P extends Schema | undefined = undefined,
    Q extends Schema | undefined = undefined,
    B extends Schema | undefined = undefined,
    Permission extends string = never,
  >(
    route: Omit<RouteDefinition<P, Q, B, D>, 'permission' | 'problems'> & {
      permission?: Permission;
      problems?: (PlatformProblemCode | (keyof Statuses & string))[];
    },
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the input types stay with the handler
  ): RouteDefinition<any, any, any, D> & { permission?: Permission } => route as unknown as RouteDefinition<any, any, any, D> & { permission?: Permission };
}

export const bindRoutes = (routes: readonly AnyRoute[], deps: unknown): BoundRoute[] => routes.map((route) => ({ route, deps }));

export function requiresBearer(route: AnyRoute): boolean {
  return route.permission !== undefined || route.auth === 'bearer';
}

export function needsDatabase(route: AnyRoute): boolean {
  return route.needsDatabase !== false;
}

/** /ops/settings/{name} → /ops/settings/:name */
export function koaPath(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

/** Declares a route whose handler needs no dependency. */
export const defineRoute = routeDefiner();
