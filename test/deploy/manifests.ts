import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const root = join(import.meta.dirname, '..', '..');

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** `kubectl kustomize` of a folder under deploy/kubernetes (or under `kit`, a copy); kubectl missing is an error, never a skip. */
export function kustomize(folder: string, kit = join(root, 'deploy', 'kubernetes')): Manifest[] {
  let text: string;
  try {
    text = execFileSync('kubectl', ['kustomize', join(kit, folder)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('kubectl is not installed: the deploy tests render the manifests with `kubectl kustomize` (install kubectl)');
    }
    throw error;
  }
  return parseAllDocuments(text).map((document) => document.toJS() as Manifest);
}

export function readYaml<T>(path: string): T {
  return parseAllDocuments(readFileSync(join(root, path), 'utf8'))[0]!.toJS() as T;
}

// Series Prometheus itself makes, and words of PromQL, that are no metric of ours.
const NOT_METRICS = new Set(['up']);

/** The metric names a PromQL expression reads: ours all start with backplane_, nodejs_ or process_. */
export function metricNames(expr: string): string[] {
  const names = expr.match(/\b(?:backplane|nodejs|process)_[a-z0-9_]+\b/g) ?? [];
  return [...new Set(names)].filter((name) => !NOT_METRICS.has(name));
}

/**
 * A copy of deploy/kubernetes with the production secrets written by create-secret.sh, as an
 * operator's checkout holds them (the folder is git-ignored); `env` adds or replaces values.
 */
export function kitWithSecrets(env: Record<string, string> = {}): string {
  const kit = join(mkdtempSync(join(tmpdir(), 'backplane-kit-')), 'kubernetes');
  cpSync(join(root, 'deploy', 'kubernetes'), kit, { recursive: true, filter: (source) => !source.endsWith('/secrets') });
  execFileSync(join(kit, 'create-secret.sh'), [], {
    env: { ...process.env, DATABASE_URL: 'postgres://backplane:secret@db:5432/backplane', ...env },
    stdio: 'pipe',
  });
  return kit;
}
