import type { z } from 'zod';
import type { Caller, RequestOrigin } from '../caller.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type Schema = z.ZodType;
type Infer<S> = S extends Schema ? z.infer<S> : undefined;

/** What a handler is given: the validated input, its module's dependencies, and who calls from where. */
export interface HandlerInput<P, Q, B, D> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
  /** The module's dependencies, given at call time: the route itself is static data. */
  deps: D;
  /** The signed-in caller; only routes that require a bearer have one (reading it elsewhere throws). */
  caller: Caller;
  origin: RequestOrigin;
  /** A raw request header, for the few use cases that read one (Cookie, Authorization for linking). */
  header(name: string): string;
}

/** An answer whose status or headers depend on the outcome (201 or 200, Location, Set-Cookie). */
export class Reply {
  readonly body: unknown;
  readonly status: number | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(body: unknown, status?: number, headers: Readonly<Record<string, string>> = {}) {
    this.body = body;
    this.status = status;
    this.headers = headers;
  }
}

export const reply = (body: unknown, options: { status?: number; headers?: Record<string, string> } = {}) =>
  new Reply(body, options.status, options.headers);

export interface RouteDefinition<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
  D = unknown,
> {
  method: HttpMethod;
  /** OpenAPI-style path: /ops/settings/{name}. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Permission the bearer must hold; implies bearer authentication. */
  permission?: string;
  /** 'bearer' for routes that need a signed-in caller but no permission. */
  auth?: 'public' | 'bearer';
  params?: P;
  query?: Q;
  body?: B;
  /** Status of a successful answer (200 by default). */
  status?: number;
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
  return <P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined, Permission extends string = never>(
    route: Omit<RouteDefinition<P, Q, B, D>, 'permission'> & { permission?: Permission },
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
