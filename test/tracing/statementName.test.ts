import test from 'ava';
import { statementName } from '../../src/platform/tracing/statementName.ts';

test('a prepared statement is named by its own name', (t) => {
  t.is(statementName('select ratelimit_take($1, $2)', 'ratelimit_take'), 'ratelimit_take');
});

test('an unnamed statement is its operation and the first table it reads or writes', (t) => {
  t.is(statementName('select id, email from accounts where email = $1'), 'select accounts');
  t.is(statementName('INSERT INTO job_runs (job_name) VALUES ($1) RETURNING id'), 'insert job_runs');
  t.is(statementName('update settings set value = $2 where name = $1'), 'update settings');
  t.is(statementName('delete from only audit_events_2026_01 where at < $1'), 'delete audit_events_2026_01');
  t.is(statementName('-- why: one trip\n  with due as (select id from jobs where next_at <= now()) update jobs set next_at = $1 from due'), 'with jobs');
  t.is(statementName('select * from "public"."accounts"'), 'select public.accounts');
});

test('a statement without a table is its operation alone; values never reach the name', (t) => {
  t.is(statementName('select now()'), 'select');
  t.is(statementName('select * from unnest($1::text[])'), 'select');
  t.is(statementName('begin'), 'begin');
  t.is(statementName(''), 'query');
  t.is(statementName("select 1 where 'x@example.com' = 'y'"), 'select');
});
