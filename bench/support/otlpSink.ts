// A loopback OTLP/HTTP endpoint that accepts and drops every export: the "on" rows of
// bench/system pay for making and sending spans, never for a collector's work.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT: the exporter appends /v1/traces. */
  url: string;
  /** Export requests and their bytes so far: an "on" row that exported nothing measured nothing. */
  received(): { requests: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      requests += 1;
      // An empty ExportTraceServiceResponse: no body in protobuf, `{}` in JSON; both mean all accepted.
      const json = String(request.headers['content-type'] ?? '').includes('json');
      response.writeHead(200, { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
      response.end(json ? '{}' : undefined);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ requests, bytes }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
