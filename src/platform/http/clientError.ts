import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Problem } from './problem.ts';

const CLOSE_AFTER_MS = 5_000;

interface ParserRefusal {
  status: number;
  code: string;
  detail: string;
}

/** What Node's HTTP parser refused, as the status Node itself would send and a stable code. */
export function parserRefusal(errorCode: string | undefined): ParserRefusal {
  switch (errorCode) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'request_header_too_large', detail: 'The request line and headers exceed the size this server reads.' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'request_too_large', detail: 'The chunk extensions exceed the size this server reads.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return { status: 408, code: 'request_timeout', detail: 'The request did not arrive in time.' };
    default:
      return { status: 400, code: 'bad_request', detail: 'The request is not well-formed HTTP/1.1.' };
  }
}

/**
 * Requests that Node's parser refuses never reach Koa: without this they get a bare status line and
 * an empty body. Each gets a problem record instead, written raw on the socket, and the connection
 * closes since the parser cannot find where the next request starts.
 */
export function answerClientErrors(server: Server, logger: Logger): Server {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way on this connection cannot be followed by another.
    const inProgress = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;
    if (error.code === 'ECONNRESET' || !socket.writable || inProgress) {
      socket.destroy();
      return;
    }
    const refusal = parserRefusal(error.code);
    const requestId = randomUUID();
    const title = STATUS_CODES[refusal.status] ?? 'Error';
    const problem: Problem = { title, status: refusal.status, code: refusal.code, detail: refusal.detail, request_id: requestId };
    const body = JSON.stringify(problem);
    logger.info({ request_id: requestId, status: refusal.status, code: refusal.code, parser_error: error.code }, 'request refused by the HTTP parser');
    socket.end(
      `HTTP/1.1 ${refusal.status} ${title}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\n' +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    // A client that never closes its side does not keep the socket: the answer has had its time.
    const linger = setTimeout(() => socket.destroy(), CLOSE_AFTER_MS).unref();
    socket.once('close', () => clearTimeout(linger));
  });
  return server;
}
