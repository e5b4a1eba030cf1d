// A real OTLP/HTTP receiver for the tests: a Node http server on 127.0.0.1 that takes what an
// OpenTelemetry exporter posts to /v1/traces, /v1/logs and /v1/metrics, as protobuf (decoded with
// the OpenTelemetry proto definitions: the generated code of @opentelemetry/otlp-transformer 0.57,
// installed as `otlp-proto-definitions`) or as JSON, and keeps it in one plain shape.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

const root = require('otlp-proto-definitions/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: Record<'trace' | 'logs' | 'metrics', { v1: Record<string, ProtoType> }> } };
};

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}

export type Attributes = Record<string, unknown>;

export interface ReceivedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Attributes;
  status: { code: number; message?: string };
  resource: Attributes;
  scope: string;
}

export interface ReceivedLog {
  body: unknown;
  eventName?: string;
  severityText?: string;
  traceId: string;
  spanId: string;
  attributes: Attributes;
  resource: Attributes;
}

export interface ReceivedPoint {
  metric: string;
  unit?: string;
  count: number;
  sum?: number;
  attributes: Attributes;
}

export interface Received {
  path: string;
  contentType: string;
  headers: http.IncomingHttpHeaders;
  /** The body as it came, for searching it for what must never be exported. */
  raw: Buffer;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`: what OTEL_EXPORTER_OTLP_ENDPOINT or mcpHost.telemetry.endpoint is set to. */
  readonly url: string;
  readonly requests: Received[];
  readonly spans: ReceivedSpan[];
  readonly logs: ReceivedLog[];
  readonly points: ReceivedPoint[];
  /** Resolves once `done()` holds, checked after each request; rejects after `ms`. */
  waitFor(done: () => boolean, ms?: number): Promise<void>;
  /** Every body as text (protobuf's strings are readable in it, JSON's too): a secret must not be in it. */
  everything(): string;
  close(): Promise<void>;
}

const hex = (value: unknown): string => {
  if (typeof value !== 'string' || !value) return '';
  // Protobuf's bytes come as base64 (toObject with bytes: String); JSON's ids are hex already.
  return /^[0-9a-f]+$/i.test(value) && (value.length === 32 || value.length === 16)
    ? value.toLowerCase()
    : Buffer.from(value, 'base64').toString('hex');
};

function anyValue(v: unknown): unknown {
  const value = (v ?? {}) as Record<string, unknown>;
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('arrayValue' in value) return ((value.arrayValue as { values?: unknown[] }).values ?? []).map(anyValue);
  if ('kvlistValue' in value) return attributesOf((value.kvlistValue as { values?: unknown[] }).values);
  return undefined;
}

function attributesOf(list: unknown): Attributes {
  const out: Attributes = {};
  for (const kv of (list ?? []) as Array<{ key: string; value: unknown }>) out[kv.key] = anyValue(kv.value);
  return out;
}

const DECODE = { longs: String, bytes: String, enums: Number, defaults: false, arrays: true };

function decode(path: string, contentType: string, raw: Buffer): Record<string, unknown> {
  if (contentType.includes('json')) return JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  const signal = path.includes('traces') ? 'trace' : path.includes('logs') ? 'logs' : 'metrics';
  const type =
    root.opentelemetry.proto.collector[signal].v1[
      signal === 'trace' ? 'ExportTraceServiceRequest' : signal === 'logs' ? 'ExportLogsServiceRequest' : 'ExportMetricsServiceRequest'
    ];
  return type.toObject(type.decode(raw), DECODE) as Record<string, unknown>;
}

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Starts the receiver; `respond` decides each answer (200 by default; `'hang'` never answers: a slow collector). */
export async function startOtlpReceiver(respond: (path: string) => number | 'hang' = () => 200): Promise<OtlpReceiver> {
  const requests: Received[] = [];
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const points: ReceivedPoint[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(chunks);
      // An exporter with compression gzip sends the body gzipped (Content-Encoding), as a collector accepts it.
      const raw = req.headers['content-encoding'] === 'gzip' ? gunzipSync(sent) : sent;
      const contentType = String(req.headers['content-type'] ?? '');
      const path = req.url ?? '';
      requests.push({ path, contentType, headers: req.headers, raw });
      try {
        const body = decode(path, contentType, raw) as Any;
        for (const rs of body.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                name: s.name,
                kind: Number(s.kind),
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: hex(s.parentSpanId),
                attributes: attributesOf(s.attributes),
                status: { code: Number(s.status?.code ?? 0), message: s.status?.message },
                resource,
                scope: ss.scope?.name,
              });
        }
        for (const rl of body.resourceLogs ?? []) {
          const resource = attributesOf(rl.resource?.attributes);
          for (const sl of rl.scopeLogs ?? [])
            for (const l of sl.logRecords ?? [])
              logs.push({
                body: anyValue(l.body),
                eventName: l.eventName,
                severityText: l.severityText,
                traceId: hex(l.traceId),
                spanId: hex(l.spanId),
                attributes: attributesOf(l.attributes),
                resource,
              });
        }
        for (const rm of body.resourceMetrics ?? [])
          for (const sm of rm.scopeMetrics ?? [])
            for (const m of sm.metrics ?? [])
              for (const p of m.histogram?.dataPoints ?? [])
                points.push({
                  metric: m.name,
                  unit: m.unit,
                  count: Number(p.count),
                  sum: p.sum === undefined ? undefined : Number(p.sum),
                  attributes: attributesOf(p.attributes),
                });
      } catch (error) {
        res.writeHead(400).end(String(error));
        return;
      }
      const answer = respond(path);
      if (answer === 'hang') hanging.add(res);
      else
        res
          .writeHead(answer, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' })
          .end(contentType.includes('json') ? '{}' : '');
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    logs,
    points,
    waitFor(done, ms = 15_000) {
      if (done()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!done()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver did not get what was expected within ${ms} ms (${requests.length} requests)`));
        }, ms);
        waiters.add(check);
      });
    },
    everything: () => requests.map((r) => r.raw.toString('latin1')).join('\n'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
