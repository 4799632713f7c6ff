import type { IncomingMessage, Server, ServerResponse } from 'node:http';
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
   * A connection already idle when this is first called counts its grace from then.
   */
  endIdleConnections(graceMs: number): void;
  /** Stops the periodic check started by endIdleConnections. */
  stop(): void;
}

/**
 * Tracks an HTTP server's connections from the start, so a drain knows which are idle. Until a
 * drain begins a request costs one map entry (its connection's latest response), no listener:
 * counting requests in flight and idle time starts with endIdleConnections.
 */
export function trackConnections(server: Server): ConnectionDrain {
  const latest = new Map<Socket, ServerResponse>();
  const inFlight = new Map<Socket, number>();
  const idleSince = new Map<Socket, number>();
  let counting = false;
  server.on('connection', (socket: Socket) => {
    latest.set(socket, undefined as unknown as ServerResponse);
    socket.once('close', () => {
      latest.delete(socket);
      idleSince.delete(socket);
      inFlight.delete(socket);
    });
  });
  const answered = (socket: Socket) => {
    const left = (inFlight.get(socket) ?? 1) - 1;
    if (left > 0) {
      inFlight.set(socket, left);
      return;
    }
    inFlight.delete(socket);
    if (!socket.destroyed) {
      idleSince.set(socket, performance.now());
    }
  };
  const count = (socket: Socket, response: ServerResponse) => {
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    idleSince.delete(socket);
    response.once('close', () => answered(socket));
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (counting) {
      count(request.socket, response);
    } else {
      latest.set(request.socket, response);
    }
  });
  /** From the drain's start: a connection whose latest answer is unfinished is in flight until it closes, any other idle from now. */
  const startCounting = () => {
    counting = true;
    const now = performance.now();
    for (const [socket, response] of latest) {
      if (response && !response.writableFinished) {
        count(socket, response);
      } else {
        idleSince.set(socket, now);
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    close: () =>
      new Promise<void>((resolve) => {
        // http.Server#close also destroys idle keep-alive connections at once (Node 19+): only the listener goes here.
        NetServer.prototype.close.call(server, () => resolve());
      }),
    endIdleConnections(graceMs) {
      if (!counting) {
        startCounting();
      }
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
