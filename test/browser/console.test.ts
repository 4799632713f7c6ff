import test from 'ava';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { grantRoleToAccount } from '../../src/modules/auth/service.ts';
import { SCREENSHOTS, SKIP_REASON, chromiumPath, launchChromium, watchForErrors } from '../support/browser.ts';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { sendJson } from '../support/http.ts';
import { PASSWORD, accountWithPassword, signIn } from '../support/signIn.ts';
import { type TestAccount, accountWithToken, bearer } from '../support/tokens.ts';

// Without a browser on the machine every test here is skipped, under a title that says why.
const browserTest = chromiumPath ? test.serial : test.skip;
if (!chromiumPath) {
  test.skip(`console in a browser: ${SKIP_REASON}`, () => undefined);
}

const WAIT = { timeout: 30_000 };
let db: TestDatabase;
let cluster: TestCluster;
let browser: Browser;
let page: Page;
let errors: string[];
let admin: { email: string; secret: string; recoveryCodes: string[] };
let apiAdmin: TestAccount;
let viewer: TestAccount;

/** The code an authenticator app shows, `steps` 30-second steps from now. */
const codeAt = (secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });

/** A platform_admin who signs in with a password and TOTP, as an operator does. */
async function operatorWithTotp(url: string) {
  const account = await accountWithPassword(db.pool);
  await grantRoleToAccount(db.pool, account.email, 'platform_admin');
  const { access_token: token } = (await (await signIn(url, account.email)).json()) as { access_token: string };
  const started = (await (await sendJson('POST', `${url}/auth/mfa/totp`, {}, bearer(token))).json()) as { secret: string };
  const confirmed = await sendJson('POST', `${url}/auth/mfa/totp/confirm`, { code: codeAt(started.secret) }, bearer(token));
  if (confirmed.status !== 200) {
    throw new Error(`TOTP confirmation answered ${confirmed.status}`);
  }
  const { recovery_codes: recoveryCodes } = (await confirmed.json()) as { recovery_codes: string[] };
  return { email: account.email, secret: started.secret, recoveryCodes };
}

const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

/**
 * Opens a page from the nav. Right after a sign-in (a fragment token, a reload) the console may draw
 * the nav again: a link found by one protocol call and clicked by the next can be gone by then
 * ("Node is detached from document", CI on Node 24), and a click just before the redraw can be
 * lost. So the link is clicked inside the page, found and clicked in one task, and again if the
 * page did not open.
 */
async function openPage(id: string) {
  for (let attempt = 1; ; attempt += 1) {
    await page.waitForSelector(`#nav a[data-page="${id}"]`, WAIT);
    await page.$eval(`#nav a[data-page="${id}"]`, (link) => (link as unknown as { click(): void }).click());
    try {
      await page.waitForSelector(`#page[data-loaded="${id}"]`, attempt < 3 ? { timeout: 5_000 } : WAIT);
      return;
    } catch (error) {
      if (attempt >= 3) {
        throw error;
      }
    }
  }
}

/** Fills the open dialog's fields and confirms. */
async function answerDialog(values: Record<string, string>) {
  await page.waitForSelector('#dialog[open]', WAIT);
  for (const [name, value] of Object.entries(values)) {
    await page.$eval(`#dialog-form [name="${name}"]`, (element, text) => ((element as unknown as { value: string }).value = text), value);
  }
  await page.click('#dialog-form button[value="ok"]');
}

/** Waits until an expression, evaluated in the page, is true. */
const until = (expression: string, on: Page = page) => on.waitForFunction(expression, WAIT);

/**
 * Clicks a button of a table row, found and clicked in one step inside the page: the tables
 * re-render on refresh, and a handle found a moment earlier may be detached by the click.
 */
const clickRow = (selector: string) =>
  until(`(() => { const button = document.querySelector(${JSON.stringify(selector)}); button?.click(); return button !== null; })()`);
const dialogClosed = () => until(`!document.getElementById('dialog').open`);
const pageText = (text: string) => until(`document.getElementById('page').textContent.includes(${JSON.stringify(text)})`);
const rowText = (selector: string, text: string) => until(`document.querySelector(${JSON.stringify(selector)})?.textContent === ${JSON.stringify(text)}`);

test.before(async () => {
  if (!chromiumPath) {
    return;
  }
  db = await createTestDatabase();
  apiAdmin = await accountWithToken(db.pool, { roles: ['platform_admin'], ttlSeconds: 3_600 });
  viewer = await accountWithToken(db.pool, { roles: ['ops_viewer'], ttlSeconds: 3_600 });
  // APP_TEST_JOBS: test_hold runs only when asked, so no scheduled run (at the top of an hour) can refuse the manual one.
  cluster = await startCluster(db.url, 2, { APP_HEARTBEAT_SECONDS: '1', APP_TEST_JOBS: '1' });
  admin = await operatorWithTotp(cluster.url);
  browser = await launchChromium();
  page = await browser.newPage();
  errors = watchForErrors(page);
  await page.setViewport({ width: 1280, height: 800 });
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  await db?.drop();
});

browserTest('an operator signs in with password and TOTP and sees both instances', async (t) => {
  await page.goto(`${cluster.url}/console`, { waitUntil: 'load' });
  await shot('sign-in');
  await page.type('#password-form [name="email"]', admin.email);
  await page.type('#password-form [name="password"]', PASSWORD);
  await page.click('#password-form button[type="submit"]');
  await page.waitForSelector('#mfa-form:not([hidden])', WAIT);
  // The code of the next step: the one that confirmed the setup is spent.
  await page.type('#mfa-form [name="code"]', codeAt(admin.secret, 1));
  await page.click('#mfa-form button[type="submit"]');
  await page.waitForSelector('#nav:not([hidden])', WAIT);
  t.true((await page.$eval('#who', (element) => element.textContent!)).includes(admin.email));
  await until(`document.querySelectorAll('[data-instance]').length === 2`);
  await page.waitForSelector('#answering-instance', WAIT);
  const answering = await page.$eval('#answering-instance', (element) => element.textContent!);
  const listed = await page.$$eval('[data-instance]', (rows) => rows.map((row) => row.getAttribute('data-instance')));
  t.true(listed.includes(answering));
  await shot('instances');
  t.deepEqual(errors, []);
});

browserTest('a setting changed with a reason shows in its history; a stale edit shows the version conflict', async (t) => {
  await openPage('settings');
  const row = 'tr[data-setting="auth.login_attempts"]';
  await clickRow(`${row} button[data-action="edit"]`);
  await answerDialog({ value: '7', reason: 'browser test: fewer attempts' });
  await dialogClosed();
  await rowText(`${row} code.value`, '7');
  await clickRow(`${row} button[data-action="history"]`);
  await until(`document.getElementById('history').textContent.includes('browser test: fewer attempts')`);
  await shot('settings');

  // Someone else changes it meanwhile: the page still holds the version it read.
  const other = await sendJson('PUT', `${cluster.url}/ops/settings/auth.login_attempts`, { value: 8, reason: 'another operator' }, bearer(apiAdmin.token));
  t.is(other.status, 200);
  await clickRow(`${row} button[data-action="edit"]`);
  await answerDialog({ value: '9', reason: 'browser test: stale' });
  await until(`document.querySelector('#dialog .dialog-problem').textContent.includes('setting_version_conflict')`);
  await shot('settings-conflict');
  await page.click('#dialog-form button[value="cancel"]');
  await dialogClosed();
  const current = (await (await fetch(`${cluster.url}/ops/settings/auth.login_attempts`, { headers: bearer(apiAdmin.token) })).json()) as { value: number };
  t.is(current.value, 8);
  t.deepEqual(errors, []);
});

browserTest('jobs: run now queues a manual run; disable and enable ask for a reason', async (t) => {
  await openPage('jobs');
  const row = 'tr[data-job="test_hold"]';
  await clickRow(`${row} button[data-action="run"]`);
  await waitFor(
    async () => {
      const { rows } = await db.pool.query(`select 1 from job_runs where job = 'test_hold' and trigger = 'manual'`);
      return rows.length > 0 ? true : undefined;
    },
    30_000,
    'the manual run',
  );
  await clickRow(`${row} button[data-action="toggle"]`);
  await answerDialog({ reason: 'browser test: pause the cleanup' });
  await dialogClosed();
  await rowText(`${row} button[data-action="toggle"]`, 'Enable');
  await shot('jobs');
  await clickRow(`${row} button[data-action="toggle"]`);
  await answerDialog({ reason: 'browser test: resume' });
  await dialogClosed();
  await rowText(`${row} button[data-action="toggle"]`, 'Disable');
  const { rows } = await db.pool.query<{ reason: string }>(`select reason from job_definition_history where job = 'test_hold' order by id`);
  t.deepEqual(
    rows.map((r) => r.reason),
    ['browser test: pause the cleanup', 'browser test: resume'],
  );
  t.deepEqual(errors, []);
});

const rootStatus = async () => (await fetch(`${cluster.url}/`)).status;

browserTest('maintenance: switched on, the console still loads and signs in, and switches it off', async (t) => {
  // Whatever fails below, the tests after this one run out of maintenance (a sign-out refused 503 failed the next one).
  t.teardown(async () => {
    await sendJson('PUT', `${cluster.url}/ops/settings/maintenance.enabled`, { value: false, reason: 'browser test: teardown' }, bearer(apiAdmin.token));
  });
  await openPage('maintenance');
  await page.type('#maintenance-form [name="reason"]', 'browser test: deploy');
  await page.click('#maintenance-form button[type="submit"]');
  await until(`document.getElementById('maintenance-state')?.textContent.includes('ON')`);
  await shot('maintenance-on');
  // Every instance learns it through NOTIFY: wait until both refuse.
  for (let i = 0; i < 4; i += 1) {
    await waitFor(async () => ((await rootStatus()) === 503 ? true : undefined), 15_000, 'maintenance on every instance');
  }

  // A reload keeps the tab's session (sessionStorage); a fragment token signs in too, and leaves the address bar.
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('#nav:not([hidden])', WAIT);
  await page.goto(`${cluster.url}/console#token=${apiAdmin.token}`, { waitUntil: 'load' });
  await page.waitForSelector('#nav:not([hidden])', WAIT);
  t.false(page.url().includes(apiAdmin.token));
  await openPage('maintenance');
  await page.type('#maintenance-form [name="reason"]', 'browser test: deployed');
  await page.click('#maintenance-form button[type="submit"]');
  await until(`document.getElementById('maintenance-state')?.textContent.includes('off')`);
  for (let i = 0; i < 4; i += 1) {
    await waitFor(async () => ((await rootStatus()) === 404 ? true : undefined), 15_000, 'maintenance off on every instance');
  }
  t.deepEqual(errors, []);
});

browserTest('audit, retention and rate limits pages render', async (t) => {
  await openPage('audit');
  await page.waitForSelector('#audit-results svg.chart', WAIT);
  await pageText('settings.value.changed');
  await shot('audit');
  await openPage('retention');
  await pageText('audit_events');
  await shot('retention');
  await openPage('ratelimits');
  await page.waitForSelector('#ratelimit-state', WAIT);
  await shot('rate-limits');
  t.deepEqual(errors, []);
});

browserTest('incident pages: a failed run retried, a blocked email cleared and signing in, an account locked', async (t) => {
  const accepted = await sendJson('POST', `${cluster.url}/ops/jobs/definitions/test_fail/run`, {}, bearer(apiAdmin.token));
  const { id } = (await accepted.json()) as { id: string };
  await waitFor(
    async () => ((await db.pool.query(`select 1 from job_runs where id = $1 and state = 'failed'`, [id])).rowCount ? true : undefined),
    30_000,
    'the run to fail',
  );
  await openPage('jobs');
  await clickRow(`tr[data-run="${id}"] button[data-action="attempts"]`);
  await until(`document.querySelectorAll('#run-attempts [data-attempt]').length === 2`);
  await shot('jobs-runs');
  await clickRow(`tr[data-run="${id}"] button[data-action="retry"]`);
  await answerDialog({ reason: 'browser test: the upstream is back' });
  await dialogClosed();
  await waitFor(
    async () =>
      (await db.pool.query(`select 1 from audit_events where action = 'jobs.run.retried' and metadata->>'retry_of' = $1`, [id])).rowCount ? true : undefined,
    10_000,
    'the retry',
  );

  const person = await accountWithPassword(db.pool);
  for (let attempt = 0; attempt < 10; attempt += 1) {
    await signIn(cluster.url, person.email, 'wrong');
  }
  t.is((await signIn(cluster.url, person.email)).status, 429);
  await openPage('ratelimits');
  await page.type('#limits-form [name="email"]', person.email);
  await page.type('#limits-form [name="address"]', '127.0.0.1');
  await page.click('#limits-form button[type="submit"]');
  await until(`document.getElementById('limits-state')?.textContent === 'Blocked'`);
  await shot('rate-limits-blocked');
  await page.click('button[data-action="clear-limits"]');
  await answerDialog({ reason: 'browser test: the customer called' });
  await until(`document.getElementById('limits-state')?.textContent === 'Not blocked'`);
  await waitFor(async () => ((await signIn(cluster.url, person.email)).status === 200 ? true : undefined), 5_000, 'signing in after the clearing');

  await openPage('accounts');
  await clickRow(`tr[data-account="${person.email}"] button[data-action="lock"]`);
  await answerDialog({ reason: 'browser test: credentials leaked' });
  await dialogClosed();
  await until(`document.querySelector('tr[data-account="${person.email}"] button[data-action="unlock"]') !== null`);
  await shot('accounts');
  t.is((await db.pool.query(`select 1 from accounts where id = $1 and locked_at is not null`, [person.id])).rowCount, 1);
  t.deepEqual(errors, []);
});

browserTest('at phone width the pages fit the screen (wide tables scroll inside their card)', async (t) => {
  // Width only: switching isMobile reloads the page.
  await page.setViewport({ width: 390, height: 844 });
  for (const id of ['instances', 'jobs', 'settings', 'audit', 'ratelimits', 'accounts']) {
    await openPage(id);
    if (id === 'audit') {
      await page.waitForSelector('#audit-results svg.chart', WAIT);
    }
    await shot(`phone-${id}`);
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    t.true(width <= 390, `${id} is ${width} px wide`);
  }
  await page.setViewport({ width: 1280, height: 800 });
});

browserTest('an ops_viewer sees every page but no control that writes', async (t) => {
  const context = await browser.createBrowserContext();
  const viewerPage = await context.newPage();
  const viewerErrors = watchForErrors(viewerPage);
  await viewerPage.setViewport({ width: 1280, height: 800 });
  await viewerPage.goto(`${cluster.url}/console#token=${viewer.token}`, { waitUntil: 'load' });
  await viewerPage.waitForSelector('#nav:not([hidden])', WAIT);
  t.false(viewerPage.url().includes(viewer.token));
  const open = async (id: string) => {
    await viewerPage.click(`#nav a[data-page="${id}"]`);
    await viewerPage.waitForSelector(`#page[data-loaded="${id}"]`, WAIT);
  };
  await open('jobs');
  t.is(await viewerPage.$$eval('#page button[data-action="run"], #page button[data-action="toggle"]', (buttons) => buttons.length), 0);
  await open('settings');
  t.is(await viewerPage.$$eval('#page button[data-action="edit"]', (buttons) => buttons.length), 0);
  t.true((await viewerPage.$$eval('#page button[data-action="history"]', (buttons) => buttons.length)) > 0);
  await viewerPage.screenshot({ path: join(SCREENSHOTS, 'viewer-settings.png'), fullPage: true });
  await open('maintenance');
  t.is(await viewerPage.$('#maintenance-form'), null);
  await context.close();
  t.deepEqual(viewerErrors, []);
});

browserTest('/docs: the reference lists the operations by tag, with parameters, schemas and problem codes, under the strict policy', async (t) => {
  const docs = await browser.newPage();
  const docsErrors = watchForErrors(docs);
  await docs.setViewport({ width: 1280, height: 800 });
  await docs.goto(`${cluster.url}/docs`, { waitUntil: 'load' });
  await docs.waitForSelector('.operation', WAIT);
  const paths = await docs.$$eval('.operation .path', (elements) => elements.map((element) => element.textContent));
  t.true(paths.some((path) => path?.includes('/ops/settings')));
  t.deepEqual(await docs.$$eval('.tag h2', (elements) => elements.map((element) => element.textContent)), ['auth', 'health', 'meta', 'ops']);
  await docs.click('#putOpsSettingsName > summary');
  const opened = await docs.$eval('#putOpsSettingsName', (element) => element.textContent ?? '');
  t.regex(opened, /setting_version_conflict/);
  t.regex(opened, /ops\.settings\.write/);
  t.regex(opened, /reason/);
  await docs.type('#filter', 'audit');
  t.true(await docs.$eval('#putOpsSettingsName', (element) => element.hasAttribute('hidden')));
  await docs.screenshot({ path: join(SCREENSHOTS, 'docs.png') });
  await docs.close();
  t.deepEqual(docsErrors, []);
});

browserTest('a recovery code signs in too; a reload stays signed in; sign out forgets the token and ends the sign-in on the server', async (t) => {
  // The tab's stored session from the tests before is dropped, as a new tab would start.
  await page.evaluate('window.sessionStorage.clear()');
  await page.goto(`${cluster.url}/console`, { waitUntil: 'load' });
  await page.type('#password-form [name="email"]', admin.email);
  await page.type('#password-form [name="password"]', PASSWORD);
  await page.click('#password-form button[type="submit"]');
  await page.waitForSelector('#mfa-form:not([hidden])', WAIT);
  // A recovery code: an authenticator code might fall in the time step the first sign-in spent.
  await page.type('#mfa-form [name="code"]', admin.recoveryCodes[0]!);
  await page.click('#mfa-form [name="recovery"]');
  await page.click('#mfa-form button[type="submit"]');
  await page.waitForSelector('#nav:not([hidden])', WAIT);
  const open = async () =>
    Number(
      (await db.pool.query(`select count(*) from sessions s join accounts a on a.id = s.account_id where a.email = $1 and s.revoked_at is null`, [admin.email]))
        .rows[0].count,
    );
  const before = await open();
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('#nav:not([hidden])', WAIT);
  t.true((await page.$eval('#who', (element) => element.textContent!)).includes(admin.email));
  // A sign-out the server refuses (here an outage's 503) leaves the tab signed in and says so.
  await page.setRequestInterception(true);
  const refuse = (request: HTTPRequest) => {
    if (request.isInterceptResolutionHandled()) {
      return;
    }
    if (request.url().endsWith('/auth/sign-out')) {
      void request.respond({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ title: 'Service Unavailable', status: 503, code: 'database_unavailable', detail: 'The database did not answer in time.' }),
      });
    } else {
      void request.continue();
    }
  };
  page.on('request', refuse);
  try {
    await page.click('#sign-out');
    await page.waitForSelector('#toast:not([hidden])', WAIT);
    t.regex(await page.$eval('#toast', (element) => element.textContent!), /Could not end the session.*still signed in.*database_unavailable/);
    t.false(await page.$eval('#nav', (element) => element.hasAttribute('hidden')));
    t.is(await open(), before);
  } finally {
    page.off('request', refuse);
    await page.setRequestInterception(false);
  }
  await page.click('#sign-out');
  // The sign-in box, not the form inside it: the form keeps no hidden attribute while its box is hidden,
  // so waiting for the form would not wait for the sign-out to end.
  await page.waitForSelector('#sign-in:not([hidden]) #password-form:not([hidden])', WAIT);
  t.true(await page.$eval('#nav', (element) => element.hasAttribute('hidden')));
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('#sign-in:not([hidden]) #password-form:not([hidden])', WAIT);
  t.true(await page.$eval('#nav', (element) => element.hasAttribute('hidden')));
  await waitFor(async () => ((await open()) === before - 1 ? true : undefined), 15_000, 'the session to be revoked');
  t.deepEqual(errors, []);
});
