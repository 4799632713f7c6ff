import { request } from 'node:http';

export interface PlainResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | undefined;
}

/**
 * One request from a chosen loopback source address (127.0.0.2 is outside a 127.0.0.1/32 trusted
 * range), optionally with X-Forwarded-For, as a proxy or a spoofing client would send it.
 */
export function send(
  baseUrl: string,
  options: { method?: string; path: string; forwardedFor?: string; localAddress?: string; body?: unknown; headers?: Record<string, string> },
): Promise<PlainResponse> {
  const url = new URL(options.path, baseUrl);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: options.method ?? 'POST',
        localAddress: options.localAddress,
        agent: false,
        headers: {
          ...options.headers,
          ...(options.forwardedFor ? { 'X-Forwarded-For': options.forwardedFor } : {}),
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** Sends `count` requests one after the other and returns their statuses. */
export async function statuses(count: number, next: (index: number) => Promise<PlainResponse>): Promise<number[]> {
  const seen: number[] = [];
  for (let index = 0; index < count; index += 1) {
    seen.push((await next(index)).status);
  }
  return seen;
}
