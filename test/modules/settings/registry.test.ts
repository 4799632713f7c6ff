import test from 'ava';
import { compose } from '../../../src/app/application.ts';
import type { authSettings } from '../../../src/modules/auth/index.ts';
import type { maintenanceSettings } from '../../../src/modules/maintenance/index.ts';
import type { SettingsReader } from '../../../src/modules/settings/index.ts';
import { backplaneApplication } from '../../../src/app/defaultApplication.ts';
import { type SettingDefinition, checkRegistry } from '../../../src/modules/settings/registry.ts';
import { SettingsError } from '../../../src/modules/settings/errors.ts';
import { parseSettingValue, readSettingValue, toJson } from '../../../src/modules/settings/values.ts';

// Backplane's settings as the composition collects them from its modules' folders.
const SETTINGS = compose(backplaneApplication).settings;
const declared = (name: string) => SETTINGS.find((definition) => definition.name === name)!;

test('the declared settings, defaults and bounds', (t) => {
  const view = Object.fromEntries(
    SETTINGS.map((d) => [
      d.name,
      d.kind === 'integer' || d.kind === 'duration'
        ? [d.kind, toJson(d, d.default), toJson(d, d.min), toJson(d, d.max)]
        : d.kind === 'string'
          ? [d.kind, d.default, d.maxLength]
          : [d.kind, d.default],
    ]),
  );
  t.deepEqual(view, {
    'auth.login_attempts': ['integer', 10, 3, 100],
    'auth.login_address_attempts': ['integer', 50, 10, 1000],
    'auth.login_window': ['duration', '15m', '1m', '24h'],
    'auth.ip_requests_per_minute': ['integer', 60, 10, 10000],
    'auth.mfa_change_attempts': ['integer', 10, 3, 100],
    'auth.ops_require_mfa': ['boolean', true],
    'audit.retention': ['duration', '8760h', '720h', '87600h'],
    'ops.history_retention': ['duration', '8760h', '720h', '87600h'],
    'releases.instance_retention': ['duration', '2160h', '24h', '26280h'],
    'maintenance.enabled': ['boolean', false],
    'maintenance.message': ['string', '', 500],
    'maintenance.retry_after': ['duration', '5m', '1m', '24h'],
  });
});

test("each of Backplane's settings is declared by the module that owns it, and read by name and kind in TypeScript", (t) => {
  const owners = Object.fromEntries(backplaneApplication.modules.flatMap((module) => (module.settings ?? []).map((setting) => [setting.name, module.name])));
  t.deepEqual(owners, {
    'audit.retention': 'audit',
    'ops.history_retention': 'settings',
    'releases.instance_retention': 'releases',
    'auth.login_attempts': 'auth',
    'auth.login_address_attempts': 'auth',
    'auth.login_window': 'auth',
    'auth.ip_requests_per_minute': 'auth',
    'auth.mfa_change_attempts': 'auth',
    'auth.ops_require_mfa': 'auth',
    'maintenance.enabled': 'maintenance',
    'maintenance.message': 'maintenance',
    'maintenance.retry_after': 'maintenance',
  });
  // A module reads its settings through a reader typed by its declarations.
  const reads = (reader: SettingsReader<(typeof authSettings | typeof maintenanceSettings)[number]>) => [
    reader.integer('auth.login_attempts'),
    // @ts-expect-error -- no module declares this name
    reader.integer('auth.no_such_setting'),
    // @ts-expect-error -- a boolean setting, read as an integer
    reader.integer('maintenance.enabled'),
  ];
  t.is(typeof reads, 'function');
});

test('a registry that could not be served is refused at start', (t) => {
  const base: SettingDefinition = { kind: 'integer', name: 'x.y', group: 'g', description: '', default: 5, min: 1, max: 10 };
  t.notThrows(() => checkRegistry([base]));
  t.throws(() => checkRegistry([base, base]), { message: /declared twice/ });
  t.throws(() => checkRegistry([{ ...base, default: 11 }]), { message: /outside its bounds/ });
  t.throws(() => checkRegistry([{ ...base, min: 20 }]), { message: /outside its bounds/ });
  t.throws(() => checkRegistry([{ ...base, name: 'Nodots' }]), { message: /dotted lowercase/ });
  t.throws(() => checkRegistry([{ kind: 'string', name: 'a.b', group: 'g', description: '', default: 'toolong', maxLength: 3 }]), { message: /outside/ });
});

test('values are checked against kind and bounds; the error names the bound, never the value', (t) => {
  const retention = declared('audit.retention');
  t.is(parseSettingValue(retention, '87600h'), 315_360_000);
  t.is(parseSettingValue(retention, '720h'), 2_592_000);
  for (const bad of ['87601h', '719h59m59s', 87600, '87600', '1d', true, null, {}, [], '8760h0.5s']) {
    const error = t.throws(() => parseSettingValue(retention, bad), { instanceOf: SettingsError });
    t.is(error.code, 'invalid_setting_value');
    t.is(error.issues?.[0]?.location, 'body.value');
    t.regex(error.message, /720h.*87600h/);
  }
  const attempts = declared('auth.login_attempts');
  for (const bad of [2, 101, 3.5, '10', false]) {
    t.is(readSettingValue(attempts, bad), undefined, JSON.stringify(bad));
  }
  t.is(readSettingValue(attempts, 3), 3);
  const perEmail = declared('auth.login_address_attempts');
  t.deepEqual(
    [9, 10, 1000, 1001].map((value) => readSettingValue(perEmail, value)),
    [undefined, 10, 1000, undefined],
  );
  const enabled = declared('maintenance.enabled');
  t.is(readSettingValue(enabled, 'true'), undefined);
  t.is(readSettingValue(enabled, 1), undefined);
  const message = declared('maintenance.message');
  t.is(readSettingValue(message, 'é'.repeat(500)), 'é'.repeat(500));
  t.is(readSettingValue(message, 'x'.repeat(501)), undefined);
  const secret = 'a-value-that-must-not-be-echoed';
  const error = t.throws(() => parseSettingValue(message, secret.repeat(50)), { instanceOf: SettingsError });
  t.false(JSON.stringify({ message: error.message, issues: error.issues }).includes(secret));
});
