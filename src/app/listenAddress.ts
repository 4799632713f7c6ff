import { createServer } from 'node:net';
import { ConfigError } from './config.ts';

const REASONS: Record<string, string> = {
  ENOTFOUND: 'does not resolve',
  EAI_AGAIN: 'does not resolve (name lookup failed)',
  EADDRNOTAVAIL: 'is not an address of this machine',
  EADDRINUSE: 'is already in use',
  EACCES: 'needs privileges this process lacks',
};

/**
 * Binds host:port once and lets it go: a HOST that does not resolve or bind, or a port in use, is
 * refused by the primary in one line instead of crash-looping every instance it would fork.
 */
export function checkListenAddress(host: string, port: number, portVariable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      const reason = REASONS[error.code ?? ''] ?? `cannot be listened on (${error.code ?? error.message})`;
      const subject = error.code === 'EADDRINUSE' || error.code === 'EACCES' ? `${portVariable} ${port} on HOST ${host}` : `HOST ${host}`;
      reject(new ConfigError(`${subject} ${reason}`));
    });
    server.listen({ host, port }, () => server.close(() => resolve()));
  });
}
