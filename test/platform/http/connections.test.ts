import test from 'ava';
import { type Server, Agent, createServer, request } from 'node:http';
import { connect } from 'node:net';
import { trackConnections } from '../../../src/platform/http/connections.ts';

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));

const get = (agent: Agent, port: number) =>
  new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end();
  });

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

test('close() stops accepting but an idle keep-alive connection is still answered on', async (t) => {
  const server = createServer((_req, res) => res.end('ok'));
  const connections = trackConnections(server);
  const port = await listen(server);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.is((await get(agent, port)).status, 200);
  const closed = connections.close();
  t.true(await refused(port));
  const again = await get(agent, port);
  t.is(again.status, 200);
  t.true(again.reused);
  agent.destroy();
  await closed;
  connections.stop();
});

test('endIdleConnections ends idle connections and spares one with a request in flight', async (t) => {
  let answer: (() => void) | undefined;
  const server = createServer((req, res) => {
    if (req.url === '/slow') {
      answer = () => res.end('slow');
      return;
    }
    res.end('ok');
  });
  const connections = trackConnections(server);
  const port = await listen(server);
  const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  await get(idleAgent, port);
  const [idleSocket] = Object.values(idleAgent.freeSockets).flat();
  const idleClosed = new Promise((resolve) => idleSocket!.once('close', resolve));
  const slow = new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/slow' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
  for (let i = 0; i < 200 && !answer; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const closed = connections.close();
  connections.endIdleConnections(0);
  await idleClosed;
  answer!();
  t.is(await slow, 200);
  connections.endIdleConnections(0);
  await closed;
  connections.stop();
  idleAgent.destroy();
});

test('a connection idle when the drain begins is answered within its grace, then ended once idle for the grace again', async (t) => {
  const server = createServer((_req, res) => res.end('ok'));
  const connections = trackConnections(server);
  const port = await listen(server);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.is((await get(agent, port)).status, 200);
  const [socket] = Object.values(agent.freeSockets).flat();
  let endedAt = 0;
  const ended = new Promise((resolve) => socket!.once('close', () => resolve((endedAt = performance.now()))));
  const closed = connections.close();
  connections.endIdleConnections(400);
  const again = await get(agent, port);
  t.is(again.status, 200);
  t.true(again.reused);
  const answeredAt = performance.now();
  await ended;
  t.true(endedAt - answeredAt >= 300, 'the grace counts again from the last answer');
  await closed;
  connections.stop();
  agent.destroy();
});
