import type { Context } from 'koa';
import type { z } from 'zod';
import { storableText } from './schemas.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who is calling, as the bearer middleware established it. */
export interface Actor {
  kind: 'account';
  id: string;
  label: string;
  /** Authentication methods of the token's sign-in (e.g. pwd, otp, cli). */
  methods: string[];
  /** The sign-in session the token came from, when it came from one (sign-out revokes it). */
  sessionId?: string | undefined;
}

/** What a handler may know of the request besides its validated input. */
export interface RequestInfo {
  requestId: string;
  actor: Actor | undefined;
  clientAddress: string;
  userAgent: string;
  /** Raw request header, for the few routes that need one (e.g. Authorization for linking). */
  header(name: string): string;
  /** Sets a response header (Location, Retry-After, ...). */
  setHeader(name: string, value: string): void;
  /** Sets the response status when it depends on the outcome (e.g. 200 or 202). */
  setStatus(status: number): void;
}

type Schema = z.ZodType;
type Infer<S> = S extends Schema ? z.infer<S> : undefined;

export interface RouteDefinition<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
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
  handler: (input: { params: Infer<P>; query: Infer<Q>; body: Infer<B>; request: RequestInfo }) => unknown;
}

export type AnyRoute = RouteDefinition<Schema | undefined, Schema | undefined, Schema | undefined>;

/** Declares a route as data: the router and the OpenAPI document are both built from it. */
export function defineRoute<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(route: RouteDefinition<P, Q, B>): AnyRoute {
  return route as unknown as AnyRoute;
}

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

/** Where a request came from, as audit events and history rows record it. */
export function requestOrigin(request: Pick<RequestInfo, 'requestId' | 'clientAddress' | 'userAgent'>) {
  return { requestId: request.requestId, clientAddress: request.clientAddress, userAgent: request.userAgent };
}

export function requestInfo(ctx: Context): RequestInfo {
  return {
    requestId: ctx.state.requestId as string,
    actor: ctx.state.actor as Actor | undefined,
    clientAddress: ctx.state.clientAddress as string,
    // Stored with audit events and sessions; HTTP parsers differ on what header bytes they let through.
    userAgent: storableText(ctx.get('User-Agent')),
    header: (name) => ctx.get(name),
    setHeader: (name, value) => ctx.set(name, value),
    setStatus: (status) => {
      ctx.state.responseStatus = status;
    },
  };
}
