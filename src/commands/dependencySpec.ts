import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import npa from 'npm-package-arg';
import { UsageError } from './args.ts';

const KINDS = 'a version or range (^0.6.0), a tag (latest), a tarball or folder path, a file: spec, a URL or a git spec';

/**
 * Where an application gets Backplane (`new` and `upgrade --package SPEC`), read as npm reads it:
 * a tarball or folder becomes file:<absolute path>, any other spec stays exactly as given. A spec
 * npm would refuse is a UsageError, before anything is written.
 */
export function dependencySpec(spec: string | undefined, version: string): string {
  if (spec === undefined) {
    return `^${version}`;
  }
  // npm reads an empty spec as "latest" and a path resolver as the current folder: neither is what was meant.
  if (spec.trim() === '') {
    throw new UsageError(`--package is empty: pass ${KINDS}`);
  }
  if (/\p{Cc}/u.test(spec)) {
    throw new UsageError(`--package ${JSON.stringify(spec)} holds a control character (a line break?): pass ${KINDS}`);
  }
  let parsed: ReturnType<typeof npa.resolve>;
  try {
    parsed = npa.resolve('backplane', spec, process.cwd());
  } catch (error) {
    // npa's message repeats the spec as given; the code alone says what npm refused.
    const code = (error as { code?: unknown }).code;
    throw new UsageError(`--package ${JSON.stringify(spec)} is not a spec npm accepts${typeof code === 'string' ? ` (${code})` : ''}: pass ${KINDS}`);
  }
  if ((parsed.type === 'file' || parsed.type === 'directory') && parsed.fetchSpec) {
    return `file:${parsed.fetchSpec}`;
  }
  // A bare word naming a tarball or folder here (`backplane`), as before npm's reading was checked.
  if (parsed.type === 'tag' && existsSync(resolve(spec))) {
    return `file:${resolve(spec)}`;
  }
  return spec;
}
