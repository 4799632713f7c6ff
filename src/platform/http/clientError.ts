import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

// What Node's HTTP parser refuses before a request exists; anything else it reports is malformed HTTP.
const REFUSALS: Record<string, { status: number; code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'headers_too_large', detail: 'The request line and headers exceed the server limit.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', detail: 'The request did not arrive in time.' },
};
const MALFORMED = { status: 400, code: 'bad_request', detail: 'The request is not valid HTTP.' };

/**
 * The server's 'clientError' handler: a request Node's parser refuses (bytes outside the grammar
 * in the request line or a header, oversized headers) gets a problem+json answer like any other
 * error, instead of Node's bare status line. Not logged: any client can send these in a loop.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // Nothing to answer on a connection the client dropped, or once an answer has started on it.
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  const { status, code, detail } = REFUSALS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ title: STATUS_CODES[status], status, code, detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
