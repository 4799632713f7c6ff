import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

export interface ConnectionDrain {
  /**
   * Stops accepting connections, leaving open ones (idle keep-alive ones included) open; resolves
   * once every connection has ended.
   */
  close(): Promise<void>;
  /**
   * From now on, ends every connection once it has been idle (no request in flight) for graceMs.
   * A client reusing its connection sends within the grace and is answered with Connection: close
   * instead: ending a connection under a client that is sending on it is what resets requests.
   */
  endIdleConnections(graceMs: number): void;
  /** Stops the periodic check started by endIdleConnections. */
  stop(): void;
}

/** Tracks an HTTP server's connections from the start, so a drain knows how long each was idle. */
export function trackConnections(server: Server): ConnectionDrain {
  const inFlight = new Map<Socket, number>();
  const idleSince = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    idleSince.set(socket, performance.now());
    socket.once('close', () => {
      idleSince.delete(socket);
      inFlight.delete(socket);
    });
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    idleSince.delete(socket);
    response.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      if (left > 0) {
        inFlight.set(socket, left);
        return;
      }
      inFlight.delete(socket);
      if (!socket.destroyed) {
        idleSince.set(socket, performance.now());
      }
    });
  });
  let timer: NodeJS.Timeout | undefined;
  return {
    close: () =>
      new Promise<void>((resolve) => {
        // http.Server#close also destroys idle keep-alive connections at once (Node 19+): only the listener goes here.
        NetServer.prototype.close.call(server, () => resolve());
      }),
    endIdleConnections(graceMs) {
      const endIdle = () => {
        const now = performance.now();
        for (const [socket, since] of idleSince) {
          if (now - since >= graceMs) {
            idleSince.delete(socket);
            socket.destroy();
          }
        }
      };
      clearInterval(timer);
      endIdle();
      timer = setInterval(endIdle, Math.max(50, Math.min(250, graceMs / 4)));
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
