import test from 'ava';
import { createJobRegistry } from '../../../src/modules/jobs/definitions.ts';
import { JobsError } from '../../../src/modules/jobs/errors.ts';
import { parseSchedule } from '../../../src/modules/jobs/schedule.ts';

const at = (iso: string) => new Date(iso);

test('@every slots fall on multiples of the interval since the epoch, so every instance computes the same ones', (t) => {
  const second = parseSchedule('@every 1s');
  t.deepEqual(second.latestSlot(at('2026-11-22T10:00:07.450Z')), at('2026-11-22T10:00:07.000Z'));
  t.deepEqual(second.nextSlot(at('2026-11-22T10:00:07.450Z')), at('2026-11-22T10:00:08.000Z'));
  const fiveMinutes = parseSchedule('@every 5m');
  t.deepEqual(fiveMinutes.latestSlot(at('2026-11-22T10:07:00Z')), at('2026-11-22T10:05:00Z'));
  t.deepEqual(fiveMinutes.nextSlot(at('2026-11-22T10:07:00Z')), at('2026-11-22T10:10:00Z'));
  t.deepEqual(parseSchedule('@every 1h').latestSlot(at('2026-11-22T10:59:59Z')), at('2026-11-22T10:00:00Z'));
});

test('cron schedules are read in UTC', (t) => {
  const daily = parseSchedule('15 4 * * *');
  t.deepEqual(daily.latestSlot(at('2026-11-22T10:00:00Z')), at('2026-11-22T04:15:00Z'));
  t.deepEqual(daily.latestSlot(at('2026-11-22T04:00:00Z')), at('2026-11-21T04:15:00Z'));
  t.deepEqual(daily.nextSlot(at('2026-11-22T10:00:00Z')), at('2026-11-23T04:15:00Z'));
  t.deepEqual(parseSchedule('@hourly').latestSlot(at('2026-11-22T10:30:00Z')), at('2026-11-22T10:00:00Z'));
});

test('a slot counts as due from its own instant', (t) => {
  const minute = parseSchedule('* * * * *');
  t.deepEqual(minute.latestSlot(at('2026-11-22T10:01:00.200Z')), at('2026-11-22T10:01:00Z'));
});

for (const text of [
  '',
  ' @every 1s',
  '@every',
  '@every 0s',
  '@every 1d',
  '@every 1.5m',
  '@every 25h',
  '* * * * * *',
  '61 * * * *',
  'every minute',
  '0 0 30 2 *',
  'x'.repeat(101),
]) {
  test(`"${text.slice(0, 20)}" is refused as invalid_job_schedule`, (t) => {
    const error = t.throws(() => parseSchedule(text), { instanceOf: JobsError });
    t.is(error!.code, 'invalid_job_schedule');
  });
}

test('the registry refuses a bad definition at start-up, naming the job', (t) => {
  const base = { description: 'x', schedule: '@every 1m', timeoutSeconds: 10, maxAttempts: 1, handler: async () => undefined };
  t.throws(() => createJobRegistry([{ ...base, name: 'Bad-Name' }]), { message: /Bad-Name/ });
  t.throws(
    () =>
      createJobRegistry([
        { ...base, name: 'twice' },
        { ...base, name: 'twice' },
      ]),
    { message: /twice: defined twice/ },
  );
  t.throws(() => createJobRegistry([{ ...base, name: 'slow', timeoutSeconds: 0 }]), { message: /slow: timeoutSeconds/ });
  t.throws(() => createJobRegistry([{ ...base, name: 'tries', maxAttempts: 0 }]), { message: /tries: maxAttempts/ });
  t.throws(() => createJobRegistry([{ ...base, name: 'sched', schedule: 'soon' }]), { message: /sched: invalid schedule/ });
  t.throws(() => createJobRegistry([{ ...base, name: 'queue', queue: 'Q' }]), { message: /queue: the queue name/ });
  t.throws(() => createJobRegistry([{ ...base, name: 'floor', minIntervalSeconds: 0 }]), { message: /floor: minIntervalSeconds/ });
  t.throws(() => createJobRegistry([{ ...base, name: 'below', minIntervalSeconds: 300 }]), { message: /below: the schedule runs 1m apart/ });
  const registry = createJobRegistry([{ ...base, name: 'fine' }]);
  t.is(registry.get('fine')!.queue, 'default');
  t.true(registry.get('fine')!.enabled);
});

test('the shortest gap between slots: @every is its interval; a cron is looked at within a day and across days', (t) => {
  const from = at('2026-11-23T12:00:00Z');
  const gap = (text: string) => parseSchedule(text).shortestGapMs(from, 0) / 1_000;
  t.is(gap('@every 90s'), 90);
  t.is(gap('* * * * *'), 60);
  t.is(gap('*/5 * * * *'), 300);
  // 23:56, then 00:00 the next day.
  t.is(gap('*/7 * * * *'), 240);
  // 23:59, then 00:00 the next day, though the hours are far apart.
  t.is(gap('0,59 0,23 * * *'), 60);
  t.is(gap('0,30 9 * * 1-5'), 1_800);
  t.is(gap('@hourly'), 3_600);
  t.is(gap('15 4 * * *'), 86_400);
  // Monday 23:00 to Tuesday 00:00; the days' own gap is 23 h.
  t.is(gap('0 0,23 * * 1,2'), 3_600);
  // Only on the 31st and the 1st: 31 December 23:00 to 1 January 01:00 is inside the window.
  t.is(gap('0 1,23 1,31 * *'), 7_200);
  t.is(gap('0 0 1 1 *'), Number.POSITIVE_INFINITY);
});
