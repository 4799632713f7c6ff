import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './cluster.ts';

type AttributeValue = string | number | boolean;

/** One received span, the same whichever protocol carried it (ids in lowercase hex). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  /** The W3C tracestate the span carries ('' for none). */
  traceState: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
  links: Array<{ traceId: string; spanId: string }>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporters add /v1/traces). */
  url: string;
  spans(): ReceivedSpan[];
  /** Content types the exports came with. */
  contentTypes(): Set<string>;
  /** Resolves with the spans once `ready` holds for them (bounded). */
  waitForSpans(ready: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** A loopback OTLP/HTTP trace receiver: accepts http/protobuf (the default) and http/json. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!;
      contentTypes.add(type);
      const body = Buffer.concat(chunks);
      if (req.url === '/v1/traces' && type === 'application/json') {
        spans.push(...fromJson(JSON.parse(body.toString()) as JsonRequest));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      } else if (req.url === '/v1/traces' && type === 'application/x-protobuf') {
        spans.push(...fromProtobuf(body));
        // An empty ExportTraceServiceResponse: zero bytes.
        res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
      } else {
        res.writeHead(415).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...spans],
    contentTypes: () => contentTypes,
    waitForSpans: (ready, what, timeoutMs = 30_000) => waitFor(async () => (ready(spans) ? [...spans] : undefined), timeoutMs, what),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
}

interface JsonRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        traceState?: string;
        name: string;
        kind?: number;
        attributes?: JsonKeyValue[];
        links?: Array<{ traceId: string; spanId: string }>;
      }>;
    }>;
  }>;
}

const jsonAttributes = (list: JsonKeyValue[] = []) =>
  Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? '')),
    ]),
  );

function fromJson(request: JsonRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        traceState: span.traceState ?? '',
        name: span.name,
        kind: span.kind ?? 0,
        attributes: jsonAttributes(span.attributes),
        resource,
        links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
      })),
    );
  });
}

/** Protobuf fields of one message: number => raw values (bytes for length-delimited, bigint for varints). */
type Fields = Map<number, Array<Buffer | bigint>>;

/** Reads the wire format's fields; what the test needs from OTLP's messages, nothing of their schema. */
function fields(buffer: Buffer): Fields {
  const result: Fields = new Map();
  let offset = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buffer[offset++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) {
        return value;
      }
    }
  };
  while (offset < buffer.length) {
    const tag = Number(varint());
    const wireType = tag & 7;
    let value: Buffer | bigint;
    if (wireType === 0) {
      value = varint();
    } else if (wireType === 1 || wireType === 5) {
      const size = wireType === 1 ? 8 : 4;
      value = buffer.subarray(offset, offset + size);
      offset += size;
    } else if (wireType === 2) {
      const length = Number(varint());
      value = buffer.subarray(offset, offset + length);
      offset += length;
    } else {
      throw new Error(`unexpected protobuf wire type ${wireType}`);
    }
    result.set(tag >> 3, [...(result.get(tag >> 3) ?? []), value]);
  }
  return result;
}

const all = (message: Fields, field: number) => (message.get(field) ?? []).filter((value): value is Buffer => Buffer.isBuffer(value));
const first = (message: Fields, field: number) => all(message, field)[0] ?? Buffer.alloc(0);

/** KeyValue { 1 key, 2 AnyValue { 1 string, 2 bool, 3 int, 4 double } }. */
function protobufAttributes(list: Buffer[]): Record<string, AttributeValue> {
  return Object.fromEntries(
    list.map((entry) => {
      const keyValue = fields(entry);
      const value = fields(first(keyValue, 2));
      const string = all(value, 1)[0];
      const bool = value.get(2)?.[0];
      const int = value.get(3)?.[0];
      const double = all(value, 4)[0];
      const decoded = string ? string.toString() : bool !== undefined ? bool === 1n : int !== undefined ? Number(int) : double ? double.readDoubleLE(0) : '';
      return [first(keyValue, 1).toString(), decoded];
    }),
  );
}

/** ExportTraceServiceRequest { 1 ResourceSpans { 1 Resource { 1 attributes }, 2 ScopeSpans { 2 Span } } }. */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  return all(fields(body), 1).flatMap((resourceSpansBytes) => {
    const resourceSpans = fields(resourceSpansBytes);
    const resource = protobufAttributes(all(fields(first(resourceSpans, 1)), 1));
    return all(resourceSpans, 2).flatMap((scopeBytes) =>
      all(fields(scopeBytes), 2).map((spanBytes) => {
        // Span { 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 13 links { 1 trace_id, 2 span_id } }.
        const span = fields(spanBytes);
        return {
          traceId: first(span, 1).toString('hex'),
          spanId: first(span, 2).toString('hex'),
          parentSpanId: first(span, 4).toString('hex'),
          traceState: first(span, 3).toString(),
          name: first(span, 5).toString(),
          kind: Number(span.get(6)?.[0] ?? 0n),
          attributes: protobufAttributes(all(span, 9)),
          resource,
          links: all(span, 13).map((linkBytes) => {
            const link = fields(linkBytes);
            return { traceId: first(link, 1).toString('hex'), spanId: first(link, 2).toString('hex') };
          }),
        };
      }),
    );
  });
}
