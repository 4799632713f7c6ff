import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { loadApiExamples } from '../../src/app/apiExamples.ts';
import { backplaneApplication } from '../../src/app/defaultApplication.ts';
import { apiDocument } from '../../src/app/modules.ts';
import { operationOf, undeclared } from '../support/declaredResponses.ts';

// api/examples.json holds real requests and answers (npm run api:examples); the document shows
// them. They must still fit the schemas, and every operation must have one.
const examples = loadApiExamples();
const document = apiDocument(backplaneApplication, '0.0.0') as { paths: Record<string, Record<string, any>> };
const ajv = new Ajv2020({ strict: false });
ajv.addFormat('int32', true).addFormat('int64', true);
// Answered without a body: 204, or a 302 to the identity provider.
const WITHOUT_SUCCESS_EXAMPLE = new Set([
  'GET /openapi.json',
  'DELETE /auth/mfa/totp',
  'POST /auth/sign-out',
  'DELETE /auth/account',
  'GET /auth/providers/{provider}/start',
  'DELETE /auth/identities/{provider}',
]);

test('every operation has real examples: a success answer and, with a body, a request', (t) => {
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const name = `${method.toUpperCase()} ${path}`;
      const example = examples[name];
      t.truthy(example, `${name} has no example: run npm run api:examples`);
      if (!WITHOUT_SUCCESS_EXAMPLE.has(name)) {
        t.true(
          Object.keys(example?.responses ?? {}).some((status) => status.startsWith('2')),
          `${name} has no success example`,
        );
      }
      if (operation.requestBody) {
        t.not(example?.request, undefined, `${name} has no request example`);
        t.deepEqual(operation.requestBody.content['application/json'].example, example?.request);
      }
    }
  }
});

test('every example still fits the schema the document declares for it', (t) => {
  for (const [name, example] of Object.entries(examples)) {
    const [method, template] = name.split(' ') as [string, string];
    const operation = operationOf(method, template.replace(/\{[^}]+\}/g, 'x'));
    t.truthy(operation, `${name} is no longer an operation`);
    for (const [status, body] of Object.entries(example.responses)) {
      const type = Number(status) < 400 ? 'application/json' : 'application/problem+json';
      t.deepEqual(
        undeclared(operation!, { status: Number(status), headers: new Headers({ 'content-type': type }), body: JSON.stringify(body) }),
        [],
        `${name} ${status}`,
      );
    }
    if (example.request !== undefined) {
      const validate = ajv.compile(document.paths[template]![method.toLowerCase()].requestBody.content['application/json'].schema);
      t.true(validate(example.request), `${name} request: ${ajv.errorsText(validate.errors)}`);
    }
  }
});
