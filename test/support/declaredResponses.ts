// Checks one HTTP answer against api/openapi.json, with the check backplane/testing gives applications.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { responseChecker } from '../../src/testing/responses.ts';

export type { ReceivedResponse } from '../../src/testing/responses.ts';

const checker = responseChecker(JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'api', 'openapi.json'), 'utf8')));

export const { operationOf, undeclared } = checker;
