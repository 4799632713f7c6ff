// The `backplane` package: what an application needs to define its modules, compose them with
// Backplane's own and run the cluster and the command line (ADR 0120, ADR 0121). Nothing else is
// public: api/library.api.md records this surface, and a release may only add to it.
export { defineModule } from './platform/module.ts';
export type {
  AnyModule,
  ApiOf,
  CommandFlag,
  CommandLine,
  CommandShape,
  EarlyAnswer,
  ModuleCommand,
  ModuleContext,
  ModuleDeclarations,
  ModuleDefinition,
  ModuleMiddleware,
  PrimaryContext,
  PrimaryWork,
  Route,
  SettingDeclaration,
  Started,
} from './platform/module.ts';
export { backplaneModules } from './app/backplaneModules.ts';
export { CompositionError, defineApplication } from './app/application.ts';
export type { Application, ApplicationOptions } from './app/application.ts';
export { runCli } from './commands/main.ts';
export { defineRoute, moduleRouteDefiner, reply, routeDefiner } from './platform/http/route.ts';
export type { HandlerInput, HttpMethod, Infer, Reply, RouteDefinition, Schema } from './platform/http/route.ts';
export type { PlatformProblemCode } from './platform/http/errors.ts';
export type { EarlyRequest } from './platform/http/requestFrame.ts';
export type { Actor, Caller, RequestOrigin } from './platform/caller.ts';
export { AppError } from './platform/errors.ts';
export type { FieldIssue, StatusTable } from './platform/errors.ts';
export { defineJob } from './platform/jobs.ts';
export type { JobBacklog, JobContext, JobDefinition } from './platform/jobs.ts';
export type { ReadinessCheck } from './platform/readiness.ts';
export type { AnySetting, SettingKind, SettingName, SettingsApi, SettingsReader } from './platform/settingsReader.ts';
export type { AgingTarget, TargetAge } from './platform/db/aging.ts';
export type { BatchBounds, PurgeInput, PurgeResult } from './platform/db/batchedDelete.ts';
export type { PurgeLedgerKey } from './platform/db/purgeLedger.ts';
export type { AuditApi, AuditEvent, RecordAudit } from './platform/audit.ts';
export type { Queryable } from './platform/db/pool.ts';
export type { Database, DatabaseConnection, QueryRows, QueryRunner } from './platform/db/database.ts';
export { withTransaction } from './platform/db/transaction.ts';
export type { NotificationListener } from './platform/db/listener.ts';
export type { RunTask } from './platform/tasks/pool.ts';
export type { TaskFailure, TaskRef } from './platform/tasks/task.ts';
