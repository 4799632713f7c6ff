// Loaded by ava before every test file (package.json "ava.require"). A file whose tests are done but
// whose process stays alive held something its hooks did not close: ava would only notice at its
// global timeout, minutes later, and name no culprit. Here the process says what still holds it,
// and fails, a minute after the file's last hook.
import { registerCompletionHandler } from 'ava';

const GRACE_MS = 60_000;

/** One line per handle or request still open: its kind and what identifies it. */
export function openHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.flatMap((handle) => {
    const kind = (handle as object)?.constructor?.name ?? typeof handle;
    const h = handle as Record<string, any>;
    if (h === process.stdin || h === process.stdout || h === process.stderr) {
      return [];
    }
    if (kind === 'Socket' || kind === 'TLSSocket') {
      return [`${kind} ${h.localAddress ?? ''}:${h.localPort ?? ''} -> ${h.remoteAddress ?? h._pipeName ?? '?'}:${h.remotePort ?? ''}`];
    }
    if (kind === 'Server') {
      return [`Server ${JSON.stringify(h.address?.())}`];
    }
    if (kind === 'ChildProcess') {
      return [`ChildProcess ${h.pid} ${(h.spawnargs ?? []).join(' ').slice(0, 200)}`];
    }
    if (kind === 'Timeout') {
      return [
        `Timeout ${h._idleTimeout} ms ${String(h._onTimeout?.name || h._onTimeout)
          .slice(0, 200)
          .replace(/\s+/g, ' ')}`,
      ];
    }
    return [kind];
  });
}

registerCompletionHandler(() => {
  setTimeout(() => {
    process.stderr.write(
      `\nThis test file is still running ${GRACE_MS} ms after its tests finished; open:\n` +
        `  ${openHandles().join('\n  ')}\n  resources: ${process.getActiveResourcesInfo().join(', ')}\n`,
    );
    process.exit(1);
  }, GRACE_MS).unref();
});
