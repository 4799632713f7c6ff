import test from 'ava';
import { join } from 'node:path';
import { z } from 'zod';
import { CompositionError, backplaneModules, defineApplication, defineJob, defineModule, routeDefiner } from '../../src/index.ts';
import type { AnyModule, SettingDeclaration } from '../../src/index.ts';
import { runCli } from '../support/cluster.ts';

const defineRoute = routeDefiner();
const route = (method: 'GET' | 'POST', path: string, problems: string[] = []) =>
  defineRoute({ method, path, tag: 'x', summary: 'x', problems, responses: { 200: z.object({}) }, handler: () => ({}) });
const setting = (name: string): SettingDeclaration => ({ name, group: 'x', description: 'x', kind: 'integer', default: 1, min: 1, max: 2 });
const job = (name: string) => defineJob({ name, description: 'x', schedule: '@daily', timeoutSeconds: 10, maxAttempts: 1, handler: async () => undefined });

/** The one line composing Backplane's modules and these refuses with. */
function refusal(
  t: { throws: (fn: () => unknown, expectations: { instanceOf: typeof CompositionError }) => CompositionError | undefined },
  ...modules: AnyModule[]
): string {
  const error = t.throws(() => defineApplication({ name: 'app', modules: [...backplaneModules, ...modules] }), { instanceOf: CompositionError });
  return error?.message ?? '';
}

test('a module route Backplane answers, as the router matches it, is refused in one line naming both modules', (t) => {
  for (const path of ['/ops/settings', '/OPS/Settings/', '/ops/settings/{setting}']) {
    const message = refusal(t, defineModule({ name: 'inventory', routes: [route('GET', path)] }));
    t.regex(message, /^route GET \/\S+ is declared by modules settings( \(as GET \/ops\/settings(\/\{name\})?\))? and inventory$/, path);
  }
  t.notThrows(() =>
    defineApplication({
      name: 'app',
      modules: [...backplaneModules, defineModule({ name: 'inventory', routes: [route('POST', '/ops/settings/x'), route('GET', '/inventory')] })],
    }),
  );
});

test('two modules declaring one route are refused naming both; so is a module declaring it twice', (t) => {
  const stock = defineModule({ name: 'stock', routes: [route('GET', '/stock/{id}')] });
  const levels = defineModule({ name: 'levels', routes: [route('GET', '/Stock/{sku}/')] });
  t.is(refusal(t, stock, levels), 'route GET /Stock/{sku}/ is declared by modules stock (as GET /stock/{id}) and levels');
  t.is(
    refusal(t, defineModule({ name: 'stock', routes: [route('GET', '/stock'), route('GET', '/stock/')] })),
    'route GET /stock/ is declared twice by module stock (as GET /stock)',
  );
});

test('a permission, setting, job or audit action two modules declare is refused naming both', (t) => {
  const cases: [AnyModule, RegExp][] = [
    [defineModule({ name: 'inventory', permissions: { 'ops.jobs.read': 'x' } }), /^permission ops\.jobs\.read is declared by modules inventory and jobs$/],
    [
      defineModule({ name: 'inventory', settings: [setting('maintenance.enabled')] }),
      /^setting maintenance\.enabled is declared by modules maintenance and inventory$/,
    ],
    [defineModule({ name: 'inventory', jobs: [job('audit_rollup')] }), /^job audit_rollup is declared by modules audit and inventory$/],
    [
      defineModule({ name: 'inventory', auditActions: { 'settings.value.changed': 'x' } }),
      /^audit action settings\.value\.changed is declared by modules settings and inventory$/,
    ],
  ];
  for (const [module, expected] of cases) {
    t.regex(refusal(t, module), expected);
  }
  const first = defineModule({ name: 'inventory', permissions: { 'inventory.read': 'x' } });
  const second = defineModule({ name: 'stock', permissions: { 'inventory.read': 'x' } });
  t.is(refusal(t, first, second), 'permission inventory.read is declared by modules inventory and stock');
});

test("a module's names are namespaced by its name; ops. and auth. are Backplane's; permission names are lowercase words joined by dots", (t) => {
  const cases: [AnyModule, string][] = [
    [
      defineModule({ name: 'inventory', permissions: { 'ops.inventory.read': 'x' } }),
      'permission "ops.inventory.read" of module inventory is in Backplane\'s namespace ops.: name it inventory.…',
    ],
    [
      defineModule({ name: 'inventory', settings: [setting('auth.inventory_limit')] }),
      'setting "auth.inventory_limit" of module inventory is in Backplane\'s namespace auth.: name it inventory.…',
    ],
    [
      defineModule({ name: 'inventory', auditActions: { 'ops.inventory.moved': 'x' } }),
      'audit action "ops.inventory.moved" of module inventory is in Backplane\'s namespace ops.: name it inventory.…',
    ],
    [
      defineModule({ name: 'inventory', jobs: [job('auth_inventory')] }),
      'job "auth_inventory" of module inventory is in Backplane\'s namespace auth_: name it inventory_…',
    ],
    [
      defineModule({ name: 'inventory', permissions: { 'stock.read': 'x' } }),
      'permission "stock.read" of module inventory is not namespaced by its module: name it inventory.…',
    ],
    [defineModule({ name: 'inventory', jobs: [job('recount')] }), 'job "recount" of module inventory is not namespaced by its module: name it inventory_…'],
    [
      defineModule({ name: 'inventory', permissions: { 'Inventory Admin!': 'x' } }),
      'permission "Inventory Admin!" of module inventory is not lowercase words of letters, digits and _ joined by dots, like notes.read',
    ],
    [
      defineModule({ name: 'inventory', permissions: { inventory: 'x' } }),
      'permission "inventory" of module inventory is not lowercase words of letters, digits and _ joined by dots, like notes.read',
    ],
    [defineModule({ name: 'ops', permissions: { 'ops.x': 'x' } }), "module ops: ops is Backplane's namespace, name the module otherwise"],
  ];
  for (const [module, expected] of cases) {
    t.is(refusal(t, module), expected);
  }
});

test("a route's problem code no module's statuses declare is refused; the platform's and other modules' are accepted", (t) => {
  const typo = defineModule({ name: 'inventory', statuses: { inventory_full: 409 }, routes: [route('POST', '/inventory', ['inventory_ful'])] });
  t.is(refusal(t, typo), "route POST /inventory of module inventory lists problem code inventory_ful, which no module's statuses declare");
  const accepted = defineModule({
    name: 'inventory',
    statuses: { inventory_full: 409 },
    routes: [route('POST', '/inventory', ['inventory_full', 'conflict', 'account_not_found'])],
  });
  t.notThrows(() => defineApplication({ name: 'app', modules: [...backplaneModules, accepted] }));
});

const fixture = join(import.meta.dirname, 'fixtures', 'badDeclaration.ts');

test("a bad declaration stops the application's command in one line, exit 2, not a stack trace", async (t) => {
  const ran = await runCli(['jobs', 'list'], { BACKPLANE_TEST_DECLARATION: 'route' }, undefined, fixture);
  t.is(ran.code, 2, ran.stderr);
  t.is(ran.stderr, 'backplane: route GET /OPS/settings/ is declared by modules settings (as GET /ops/settings) and inventory\n');
});

test('roles create refuses a permission that is no permission name, declared or not, in one line', async (t) => {
  const declared = await runCli(
    ['roles', 'create', 'inventory_admins', '--permission', 'Inventory Admin!'],
    { BACKPLANE_TEST_DECLARATION: 'permission' },
    undefined,
    fixture,
  );
  t.is(declared.code, 2, declared.stderr);
  t.is(
    declared.stderr,
    'backplane: permission "Inventory Admin!" of module inventory is not lowercase words of letters, digits and _ joined by dots, like notes.read\n',
  );
  // Backplane alone: refused by the command itself, before it reaches a database.
  const alone = await runCli(['roles', 'create', 'inventory_admins', '--permission', 'Inventory Admin!'], {
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  });
  t.is(alone.code, 2, alone.stderr);
  t.is(
    alone.stderr,
    'backplane: permission "Inventory Admin!" is not a permission name: lowercase words of letters, digits and _ joined by dots, like notes.read\n',
  );
});
