#!/usr/bin/env node
import { ConfigError } from './app/config.ts';
import { AppError } from './platform/errors.ts';
import { type Flags, UsageError, parseArgs } from './commands/args.ts';

const USAGE = `usage: backplane <command>

  serve [--instances N] [--port P]          run the clustered service
  migrate up | migrate status [--json]      apply or inspect migrations
  accounts create --email E [--role R]... [--password-stdin] | accounts list
  accounts lock|unlock --email E [--reason R]   end (or allow again) an account's access everywhere (audited)
  roles create NAME --permission P... | roles grant EMAIL ROLE | roles list   (audited; --reason R)
  token issue --email E [--ttl 15m]         print a bearer token for an account (audited)
  maintenance on|off [--message M] [--retry-after 5m] --reason R
                                            switch maintenance mode on every instance
  openapi [--dir api]                       write the generated API files

Configuration comes from the environment; see README.md.`;

type Command = (flags: Flags) => Promise<number | void>;

const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./commands/serve.ts')).serve,
  migrate: async () => (await import('./commands/migrate.ts')).migrate,
  accounts: async () => (await import('./commands/accounts.ts')).accounts,
  roles: async () => (await import('./commands/roles.ts')).roles,
  token: async () => (await import('./commands/token.ts')).token,
  maintenance: async () => (await import('./commands/maintenance.ts')).maintenance,
  openapi: async () => (await import('./commands/openapi.ts')).openapi,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const load = name ? commands[name] : undefined;
  if (!load) {
    console.error(USAGE);
    return name === undefined || name === 'help' || name === '--help' ? 0 : 2;
  }
  const run = await load();
  const code = await run(parseArgs(rest));
  return code ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    // serve keeps running; other commands end here.
    if (process.argv[2] !== 'serve') {
      process.exit(code);
    }
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`backplane: ${error.message}`);
      process.exit(2);
    }
    if (error instanceof AppError) {
      console.error(`backplane: ${error.code}: ${error.message}`);
      process.exit(1);
    }
    console.error('backplane: failed:', error);
    process.exit(1);
  },
);
