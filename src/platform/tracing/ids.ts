import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

/** Random bytes drawn at once: 170 requests' trace and span ids. */
const POOL_BYTES = 4_096;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

/**
 * Trace and span ids cut from a pool of random bytes hex-encoded at once. The SDK's default draws
 * Math.random four times and hex-encodes a buffer for every id, twice per request even when the
 * request is sampled out: about a third of a sampled-out request's span cost on the request path
 * (bench/README.md, issue 34). These come from the CSPRNG, and an all-zero id (invalid in W3C
 * trace context) is never handed out.
 */
export class PooledIdGenerator implements IdGenerator {
  private hex = '';
  private offset = 0;

  generateTraceId(): string {
    const id = this.take(32);
    return id === INVALID_TRACE_ID ? this.generateTraceId() : id;
  }

  generateSpanId(): string {
    const id = this.take(16);
    return id === INVALID_SPAN_ID ? this.generateSpanId() : id;
  }

  private take(length: number): string {
    if (this.offset + length > this.hex.length) {
      this.hex = randomFillSync(Buffer.allocUnsafe(POOL_BYTES)).toString('hex');
      this.offset = 0;
    }
    const id = this.hex.slice(this.offset, this.offset + length);
    this.offset += length;
    return id;
  }
}
