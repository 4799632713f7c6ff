// What the machine charges for one process waking another: a loopback TCP round trip between two
// processes, 200 bytes each way, as a load generator and a server exchange them. On the bench VM
// (Firecracker, nested, guest halt polling off: haltpoll.guest_halt_poll_ns=0 on the kernel's
// command line) a round trip cost each side 42-57 µs of CPU across its two cores and 15-18 µs with
// both processes on one core; with guest_halt_poll_ns set to 200000 at run time, 19-20 µs
// (bench/README.md, 2026-11-27), and 13.8 µs while both cores ran a test suite: the price is a
// halted vCPU's, paid whenever the other side was idle. Quick measures it at rest, before its loads,
// and prints it beside its table: figures from machines whose wake-ups differ this much are not
// comparable, and ratios between servers that make the others wake at different rates are not
// free of it either.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type Socket, connect, createServer } from 'node:net';

export interface Wakeups {
  /** Wall time of one round trip, µs. */
  roundTripUs: number;
  /** CPU (user and system) the measuring process spent per round trip, µs: one write, one wake-up, one read. */
  cpuUsPerSide: number;
  /** /sys/module/haltpoll/parameters/guest_halt_poll_ns, where the guest has the haltpoll driver: 0 halts an idle vCPU at once. */
  guestHaltPollNs: number | null;
}

const PEER_FLAG = '--wakeups-peer';

function readHaltPoll(): number | null {
  try {
    return Number(readFileSync('/sys/module/haltpoll/parameters/guest_halt_poll_ns', 'utf8').trim());
  } catch {
    return null;
  }
}

/** Round trips with a forked echo peer, after a warm-up; the median of three passes. */
export async function measureWakeups(roundTrips = 5_000): Promise<Wakeups> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const peer = fork(import.meta.filename, [PEER_FLAG, String(port)], { execArgv: process.execArgv, stdio: 'ignore' });
  try {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the wake-up peer did not connect within 10 s')), 10_000);
      server.once('connection', (connection: Socket) => {
        clearTimeout(timer);
        resolve(connection);
      });
    });
    socket.setNoDelay(true);
    const payload = Buffer.alloc(200, 1);
    const pass = (count: number) =>
      new Promise<{ wallUs: number; cpuUs: number }>((resolve) => {
        let left = count;
        const cpu = process.cpuUsage();
        const started = performance.now();
        const onData = () => {
          left -= 1;
          if (left > 0) {
            socket.write(payload);
            return;
          }
          socket.off('data', onData);
          const used = process.cpuUsage(cpu);
          resolve({ wallUs: ((performance.now() - started) * 1000) / count, cpuUs: (used.user + used.system) / count });
        };
        socket.on('data', onData);
        socket.write(payload);
      });
    await pass(500);
    const passes = [await pass(roundTrips), await pass(roundTrips), await pass(roundTrips)];
    const middle = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
    socket.destroy();
    return {
      roundTripUs: Number(middle(passes.map((p) => p.wallUs)).toFixed(1)),
      cpuUsPerSide: Number(middle(passes.map((p) => p.cpuUs)).toFixed(1)),
      guestHaltPollNs: readHaltPoll(),
    };
  } finally {
    peer.kill();
    server.close();
  }
}

// The echo peer: every 200 bytes it reads go straight back (reads may coalesce; the measuring side writes one at a time).
if (process.argv[2] === PEER_FLAG) {
  const socket = connect(Number(process.argv[3]), '127.0.0.1');
  socket.setNoDelay(true);
  socket.on('data', (chunk) => socket.write(chunk));
  socket.on('error', () => process.exit(0));
  socket.on('close', () => process.exit(0));
}
