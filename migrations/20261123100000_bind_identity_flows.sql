-- A provider flow is bound to the browser that started it: the start sets an HttpOnly cookie
-- holding a random secret, and the flow keeps only its SHA-256. Flows in progress when this runs
-- had no cookie and could never complete, so they are removed.
delete from identity_flows;
alter table identity_flows add column browser_hash bytea not null check (length(browser_hash) = 32);
