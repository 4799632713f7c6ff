import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderApiFiles } from '../app/apiFiles.ts';
import { type Flags, flag } from './args.ts';

/** `openapi [--dir api]`: writes openapi.json, postman_collection.json and llms.txt. */
export async function openapi(flags: Flags): Promise<number> {
  const dir = resolve(flag(flags, 'dir') ?? 'api');
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(await renderApiFiles())) {
    writeFileSync(join(dir, name), content);
    console.log(`wrote ${join(dir, name)}`);
  }
  return 0;
}
