// An RFC 7009 revocation client over node:http(s) with keep-alive sockets: a form POST of the token
// with client authentication (RFC 6749 §2.3.1), 200 meaning revoked or already invalid.
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface RevocationTarget {
  revocationEndpoint: string;
  clientId: string;
  clientSecret: string;
  authMethod: 'client_secret_basic' | 'client_secret_post';
  /** http:// allowed (a loopback issuer outside production). */
  insecureLoopback: boolean;
}

/** A refused or failed revocation, as a short code safe to store: `http_400:invalid_client`, `http_503`… */
export class RevocationRefused extends Error {
  readonly failure: string;
  constructor(failure: string) {
    super(`the revocation endpoint answered ${failure}`);
    this.failure = failure;
  }
}

const OAUTH_ERROR = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_ERROR_BODY = 4096;

// RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

function failureOf(response: IncomingMessage, body: Buffer): string {
  let oauthError: unknown;
  try {
    oauthError = (JSON.parse(body.toString('utf8')) as { error?: unknown }).error;
  } catch {
    // Not an OAuth error body: the status says enough.
  }
  return typeof oauthError === 'string' && OAUTH_ERROR.test(oauthError) ? `http_${response.statusCode}:${oauthError}` : `http_${response.statusCode}`;
}

export interface RevocationClient {
  /** Resolves on 200; rejects with RevocationRefused, or the transport's error (network, timeout). */
  revoke(token: string): Promise<void>;
  close(): void;
}

export function createRevocationClient(target: RevocationTarget, options: { timeoutMs: number; sockets: number }): RevocationClient {
  const url = new URL(target.revocationEndpoint);
  const secure = url.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: options.sockets }) : new HttpAgent({ keepAlive: true, maxSockets: options.sockets });
  const send = secure ? httpsRequest : httpRequest;
  const basic = `Basic ${Buffer.from(`${formEncode(target.clientId)}:${formEncode(target.clientSecret)}`).toString('base64')}`;

  return {
    revoke(token) {
      if (!secure && !target.insecureLoopback) {
        return Promise.reject(new RevocationRefused('insecure_endpoint'));
      }
      const form = new URLSearchParams({ token, token_type_hint: 'refresh_token' });
      if (target.authMethod === 'client_secret_post') {
        form.set('client_id', target.clientId);
        form.set('client_secret', target.clientSecret);
      }
      const body = form.toString();
      return new Promise<void>((resolve, reject) => {
        const request = send(
          url,
          {
            method: 'POST',
            agent,
            signal: AbortSignal.timeout(options.timeoutMs),
            headers: {
              'Content-Type': 'application/x-www-form-urlencoded',
              'Content-Length': Buffer.byteLength(body),
              Accept: 'application/json',
              ...(target.authMethod === 'client_secret_basic' ? { Authorization: basic } : {}),
            },
          },
          (response) => {
            const chunks: Buffer[] = [];
            let size = 0;
            response.on('data', (chunk: Buffer) => {
              if (size < MAX_ERROR_BODY) {
                chunks.push(chunk);
                size += chunk.length;
              }
            });
            response.on('error', reject);
            response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new RevocationRefused(failureOf(response, Buffer.concat(chunks))))));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}
