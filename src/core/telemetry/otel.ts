/**
 * The OTLP exporter of the gate's telemetry, on the OpenTelemetry JS SDK: a span per gated request
 * with the MCP semantic conventions (`{mcp.method.name} {target}`, kind CLIENT), the client-side
 * `mcp.client.operation.duration` histogram, and each audit record as a log record carrying its
 * chain hash, the previous one and its MAC. Bundled apart (dist/otel.js) and required only once an
 * endpoint is configured (./load.ts).
 *
 * Nothing is registered globally (no global tracer provider, context manager, propagator or diag
 * logger): the extension host is shared with other extensions, and their OpenTelemetry is theirs.
 * Export runs off the call's path in the SDK's batch processors, whose queues are bounded (spans
 * and log records over them are dropped); a failed export is reported once per streak, never
 * thrown, and never touches the local audit log.
 */
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { SeverityNumber, type LogRecord } from '@opentelemetry/api-logs';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { AggregationTemporalityPreference, OTLPMetricExporterBase } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { createOtlpHttpExportDelegate, httpAgentFactoryFromOptions } from '@opentelemetry/otlp-exporter-base/node-http';
import {
  JsonLogsSerializer,
  JsonMetricsSerializer,
  JsonTraceSerializer,
  LogsExporterMetricsHelper,
  MetricsExporterMetricsHelper,
  ProtobufLogsSerializer,
  ProtobufMetricsSerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
  type IExporterMetricsHelper,
  type ISerializer,
} from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { GateRequest } from '../policy/gate';
import type { AnyAuditRecord, Outcome } from '../policy/types';
import { describeDestination, secretsOf, type ExportConfig, type SignalExport } from './config';
import type { Cleaner, TelemetryExporter } from './exporter';
import type { RequestEnding, RequestSpan, RequestStart } from '../policy/telemetry';
import { traceContextOf, type TraceContext } from '../protocol/traceContext';

/** The instrumentation scope of everything MCP Host exports. */
const SCOPE = 'mcp-host';
/** Bucket boundaries for MCP operation durations, in seconds (the conventions' advice for `mcp.*.duration`). */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300];
/** The most a batch queue holds; beyond it records are dropped rather than memory spent. */
const MAX_QUEUE = 2048;
/** The most records one export carries (the SDK's default, given so that no variable changes it). */
const MAX_BATCH = 512;
/** The most attributes a span keeps (the SDK's default; MCP Host's spans have about 25, more only with many prompt arguments exported). */
const MAX_ATTRIBUTES = 128;
/** How long one export may take unless OTEL_EXPORTER_OTLP_TIMEOUT says otherwise. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Arguments and results are cut to this many characters in an export (after masking). */
const MAX_CONTENT = 16_384;

export interface OtelOptions {
  config: ExportConfig;
  /** The servers' secrets redacted and secret shapes masked: every text from a request or record passes it. */
  clean: Cleaner;
  /** A failed export, reported once per streak (the editor shows it, the CLI writes it on stderr): its text names no header. */
  onError(message: string): void;
  /** Resource attributes of the host (service.version, the editor's name). */
  resource?: Record<string, string>;
  /** How often batches go out (5 s) and metrics are collected (60 s); the tests make them short. */
  scheduledDelayMs?: number;
  metricIntervalMs?: number;
}

/** Starts exporting: the providers, their exporters and the span, metric and log hooks. */
export function startOtel(options: OtelOptions): TelemetryExporter {
  return new OtelExporter(options);
}

class OtelExporter implements TelemetryExporter {
  private readonly tracerProvider?: BasicTracerProvider;
  private readonly loggerProvider?: LoggerProvider;
  private readonly meterProvider?: MeterProvider;
  private readonly tracer;
  private readonly logger;
  private readonly duration;
  private readonly propagator = new W3CTraceContextPropagator();
  private failing = false;
  private readonly secrets: string[];

  constructor(private readonly options: OtelOptions) {
    const { config } = options;
    this.secrets = secretsOf(config);
    const resource = resourceFromAttributes({
      'service.name': config.serviceName,
      'host.name': os.hostname(),
      ...options.resource,
      ...config.resource,
    });
    const timeoutMillis = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Every value given, so that none comes from the OTEL_BSP_* or OTEL_*_LIMIT variables of the process (see signalExporter).
    const batch = {
      maxQueueSize: MAX_QUEUE,
      maxExportBatchSize: MAX_BATCH,
      scheduledDelayMillis: options.scheduledDelayMs ?? 5000,
      exportTimeoutMillis: timeoutMillis,
    };
    const { traces, logs, metrics } = config.signals;
    const tlsProblem = (message: string): void => {
      try {
        options.onError(`telemetry: ${message}`);
      } catch {
        // Nobody to tell.
      }
    };
    if (traces) {
      const exporter = this.watched(traceExporter(traces, timeoutMillis, tlsProblem));
      this.tracerProvider = new BasicTracerProvider({
        resource,
        sampler: new AlwaysOnSampler(),
        generalLimits: { attributeCountLimit: MAX_ATTRIBUTES, attributeValueLengthLimit: Infinity },
        spanLimits: {
          attributeCountLimit: MAX_ATTRIBUTES,
          attributeValueLengthLimit: Infinity,
          linkCountLimit: MAX_ATTRIBUTES,
          eventCountLimit: MAX_ATTRIBUTES,
          attributePerEventCountLimit: MAX_ATTRIBUTES,
          attributePerLinkCountLimit: MAX_ATTRIBUTES,
        },
        spanProcessors: [new BatchSpanProcessor(exporter, batch)],
      });
    }
    if (logs) {
      const exporter = this.watched(logExporter(logs, timeoutMillis, tlsProblem));
      this.loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter, ...batch })] });
    }
    if (metrics) {
      const exporter = this.watched(metricExporter(metrics, timeoutMillis, tlsProblem));
      this.meterProvider = new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter,
            exportIntervalMillis: options.metricIntervalMs ?? 60_000,
            exportTimeoutMillis: Math.min(timeoutMillis, options.metricIntervalMs ?? 60_000),
          }),
        ],
      });
    }
    this.tracer = this.tracerProvider?.getTracer(SCOPE);
    this.logger = this.loggerProvider?.getLogger(SCOPE);
    this.duration = this.meterProvider?.getMeter(SCOPE).createHistogram('mcp.client.operation.duration', {
      unit: 's',
      description: 'The duration of the MCP request as observed by MCP Host, from the time it was sent until the response was received.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  }

  /** An exporter whose failures are reported (once per streak) instead of thrown or logged with their headers. */
  private watched<E extends SpanExporter | PushMetricExporter | { export(items: never, done: (r: ExportResult) => void): void }>(
    exporter: E,
  ): E {
    const original = exporter.export.bind(exporter) as (items: unknown, done: (r: ExportResult) => void) => void;
    (exporter as { export: typeof original }).export = (items, done) =>
      original(items, (result) => {
        if (result.code === ExportResultCode.SUCCESS) this.failing = false;
        else this.report(result.error);
        done(result);
      });
    return exporter;
  }

  private report(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    let message = error instanceof Error ? error.message : String(error ?? 'the export failed');
    for (const secret of this.secrets) message = message.split(secret).join('[header]');
    try {
      this.options.onError(
        `telemetry could not be exported to ${describeDestination(this.options.config)}: ${this.options.clean.text(message)}`,
      );
    } catch {
      // Nobody to tell: the next export is still tried.
    }
  }

  begin(start: RequestStart): RequestSpan {
    const tracer = this.tracer;
    const { clean } = this.options;
    const parent = start.trace ? this.propagator.extract(ROOT_CONTEXT, start.trace, defaultTextMapGetter) : ROOT_CONTEXT;
    const attributes: Attributes = {
      ...requestAttributes(start.request, clean),
      'mcp_host.origin': start.origin,
      'mcp_host.server.name': clean.text(start.server.name),
      'mcp_host.server.scope': start.server.scope,
    };
    if (start.client?.name) attributes['mcp_host.client.name'] = clean.text(start.client.name);
    if (start.client?.version) attributes['mcp_host.client.version'] = clean.text(start.client.version);
    if (start.conversationId) attributes['gen_ai.conversation.id'] = clean.text(start.conversationId);
    if (start.server.sandbox) attributes['mcp_host.server.sandboxed'] = true;
    if (this.options.config.exportContent) Object.assign(attributes, contentAttributes(start.request, clean));
    const span = tracer?.startSpan(spanName(start.request), { kind: SpanKind.CLIENT, attributes }, parent);
    let propagated: TraceContext | undefined = start.trace;
    let context: Context = parent;
    if (span) {
      context = trace.setSpan(parent, span);
      const carrier: Record<string, string> = {};
      this.propagator.inject(context, carrier, defaultTextMapSetter);
      propagated = traceContextOf(carrier) ?? start.trace;
    }
    const spanContext = span?.spanContext();
    const ids = spanContext ? { traceId: spanContext.traceId, spanId: spanContext.spanId } : undefined;
    return {
      propagated,
      ids,
      end: (ending) => {
        const end = endAttributes(ending, clean, this.options.config.exportContent);
        if (span) {
          span.setAttributes(end.attributes);
          if (this.options.config.exportContent && ending.result !== undefined && start.request.method === 'tools/call')
            span.setAttribute('gen_ai.tool.call.result', cleanJson(ending.result, clean));
          if (end.errorType !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: end.status });
          span.end();
        }
        if (this.duration && ending.sentMs !== undefined) {
          this.duration.record(ending.sentMs / 1000, metricAttributes(attributes, end.attributes), context);
        }
      },
    };
  }

  auditRecords(records: readonly AnyAuditRecord[]): void {
    const logger = this.logger;
    if (!logger) return;
    for (const record of records) {
      try {
        logger.emit(auditLogRecord(record, this.options.clean, this.options.config.exportContent));
      } catch {
        // One record that cannot be exported costs that record's export, never the local audit.
      }
    }
  }

  async flush(): Promise<void> {
    await Promise.allSettled([this.tracerProvider?.forceFlush(), this.loggerProvider?.forceFlush(), this.meterProvider?.forceFlush()]);
  }

  async shutdown(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const done = Promise.allSettled([
      this.tracerProvider?.shutdown(),
      this.loggerProvider?.shutdown(),
      this.meterProvider?.shutdown(),
    ]).then(() => true);
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
    });
    const finished = await Promise.race([done, late]);
    clearTimeout(timer);
    if (!finished) this.report(new Error(`the last export did not finish within ${timeoutMs} ms`));
    return finished;
  }
}

/**
 * The OTLP/HTTP exporter of one signal, configured by `s` and nothing else. The SDK's own exporter
 * classes also read the `OTEL_EXPORTER_OTLP_*` variables of the process and add their headers,
 * certificates and compression beneath what they are given; in the editor those variables are
 * whatever environment VS Code was started from, meant for other programs (a token for another
 * collector would be sent to this one). So the exporters are built on the SDK's export delegate
 * from an explicit configuration: the CLI reads the variables it honours itself (./config.ts).
 */
function signalExporter<Items, Response>(
  s: SignalExport,
  timeoutMillis: number,
  serializers: { json: ISerializer<Items, Response>; protobuf: ISerializer<Items, Response> },
  component: string,
  helper: IExporterMetricsHelper<Items>,
  onTlsProblem: (message: string) => void,
) {
  const json = s.protocol === 'http/json';
  return createOtlpHttpExportDelegate<Items, Response>(
    {
      url: s.url,
      headers: async () => ({ ...s.headers, 'Content-Type': json ? 'application/json' : 'application/x-protobuf' }),
      agentFactory: httpAgentFactoryFromOptions({ keepAlive: true, ...tlsFiles(s.tls, onTlsProblem) }),
      compression: s.compression ?? 'none',
      timeoutMillis,
      concurrencyLimit: 30,
    },
    json ? serializers.json : serializers.protobuf,
    component,
    helper,
    undefined,
  );
}

/** The TLS files a signal names, read now; one that cannot be read is reported (by its variable's role, not its content) and left out. */
function tlsFiles(tls: SignalExport['tls'], onProblem: (message: string) => void): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const out: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  for (const part of ['ca', 'cert', 'key'] as const) {
    const file = tls?.[part];
    if (!file) continue;
    try {
      out[part] = readFileSync(file);
    } catch (error) {
      onProblem(
        `the ${TLS_NAMES[part]} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); it is not used`,
      );
    }
  }
  return out;
}

const TLS_NAMES = { ca: 'certificate', cert: 'client certificate', key: 'client key' } as const;

function traceExporter(s: SignalExport, timeoutMillis: number, onTlsProblem: (message: string) => void): SpanExporter {
  return new OTLPExporterBase<ReadableSpan[]>(
    signalExporter(
      s,
      timeoutMillis,
      { json: JsonTraceSerializer, protobuf: ProtobufTraceSerializer },
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      onTlsProblem,
    ),
  );
}

function logExporter(s: SignalExport, timeoutMillis: number, onTlsProblem: (message: string) => void): LogRecordExporter {
  return new OTLPExporterBase<ReadableLogRecord[]>(
    signalExporter(
      s,
      timeoutMillis,
      { json: JsonLogsSerializer, protobuf: ProtobufLogsSerializer },
      'otlp_http_log_exporter',
      LogsExporterMetricsHelper,
      onTlsProblem,
    ),
  );
}

function metricExporter(s: SignalExport, timeoutMillis: number, onTlsProblem: (message: string) => void): PushMetricExporter {
  return new OTLPMetricExporterBase(
    signalExporter<ResourceMetrics, unknown>(
      s,
      timeoutMillis,
      { json: JsonMetricsSerializer, protobuf: ProtobufMetricsSerializer },
      'otlp_http_metric_exporter',
      MetricsExporterMetricsHelper,
      onTlsProblem,
    ),
    // Given, so that OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE is not read either.
    { temporalityPreference: AggregationTemporalityPreference.CUMULATIVE },
  );
}

/** `{mcp.method.name} {target}`: the tool or prompt; a resource's URI is not a low-cardinality target and stays out of the name. */
export function spanName(request: GateRequest): string {
  switch (request.method) {
    case 'tools/call':
      return `tools/call ${request.tool.name}`;
    case 'prompts/get':
      return `prompts/get ${request.name}`;
    case 'completion/complete':
      return request.params.ref.type === 'ref/prompt' ? `completion/complete ${request.params.ref.name}` : 'completion/complete';
    default:
      return request.method;
  }
}

function requestAttributes(request: GateRequest, clean: Cleaner): Attributes {
  const attributes: Attributes = { 'mcp.method.name': request.method };
  switch (request.method) {
    case 'tools/call':
      attributes['gen_ai.operation.name'] = 'execute_tool';
      attributes['gen_ai.tool.name'] = clean.text(request.tool.name);
      break;
    case 'prompts/get':
      attributes['gen_ai.prompt.name'] = clean.text(request.name);
      break;
    case 'completion/complete':
      if (request.params.ref.type === 'ref/prompt') attributes['gen_ai.prompt.name'] = clean.text(request.params.ref.name);
      else attributes['mcp.resource.uri'] = clean.text(request.params.ref.uri);
      break;
    default:
      attributes['mcp.resource.uri'] = clean.text(request.uri);
  }
  return attributes;
}

/** Arguments, only where the person or the organisation asked for them: masked, cut short. */
function contentAttributes(request: GateRequest, clean: Cleaner): Attributes {
  if (request.method === 'tools/call') return { 'gen_ai.tool.call.arguments': cleanJson(request.arguments, clean) };
  if (request.method === 'prompts/get')
    return Object.fromEntries(Object.entries(request.arguments).map(([k, v]) => [`gen_ai.prompt.variable.${k}`, cleanText(v, clean)]));
  return {};
}

function cleanText(text: string, clean: Cleaner): string {
  return clean.text(text).slice(0, MAX_CONTENT);
}

function cleanJson(value: unknown, clean: Cleaner): string {
  try {
    return cleanText(JSON.stringify(clean.value(value)) ?? '', clean);
  } catch {
    return '[not exported: it could not be masked]';
  }
}

/** The conventions' `error.type`: the JSON-RPC code, `tool_error` for an `isError` result, and MCP Host's own for what never reached the server. */
function errorTypeOf(outcome: Outcome, decision: string): string | undefined {
  switch (outcome.kind) {
    case 'error':
      return String(outcome.code);
    case 'isError':
      return 'tool_error';
    case 'cancelled':
      return 'cancelled';
    case 'not-sent':
      return `mcp_host.${decision}`;
    default:
      return undefined;
  }
}

/** The refusal's reason as it may be exported: a fenced one names the arguments' pointers, their values only with the arguments. */
function exportedReason(ending: RequestEnding, exportContent: boolean): string | undefined {
  if (!ending.reason || exportContent || !ending.fenced?.length) return ending.reason;
  return `outside the roots: ${ending.fenced.map((f) => f.pointer || 'the URI').join(', ')}`;
}

function endAttributes(
  ending: RequestEnding,
  clean: Cleaner,
  exportContent: boolean,
): { attributes: Attributes; errorType?: string; status?: string } {
  const attributes: Attributes = { 'mcp_host.decision': ending.decision, 'mcp_host.outcome': ending.outcome.kind };
  const reason = exportedReason(ending, exportContent);
  if (reason) attributes['mcp_host.reason'] = clean.text(reason);
  if (ending.asked?.length) attributes['mcp_host.asked'] = ending.asked;
  if (ending.requestId !== undefined) attributes['jsonrpc.request.id'] = String(ending.requestId);
  const c = ending.connection;
  if (c?.protocolVersion) attributes['mcp.protocol.version'] = c.protocolVersion;
  if (c?.sessionId) attributes['mcp.session.id'] = clean.text(c.sessionId);
  if (c?.transport) attributes['network.transport'] = c.transport;
  if (c?.address) attributes['server.address'] = c.address;
  if (c?.port !== undefined) attributes['server.port'] = c.port;
  if (ending.outcome.kind === 'error') attributes['rpc.response.status_code'] = String(ending.outcome.code);
  const errorType = errorTypeOf(ending.outcome, ending.decision);
  if (errorType !== undefined) attributes['error.type'] = errorType;
  const message = ending.error instanceof Error ? ending.error.message : reason;
  return { attributes, errorType, status: message === undefined ? errorType : clean.text(message) };
}

/** The histogram's attributes: the low-cardinality ones of the span (no URI, id, session or reason). */
function metricAttributes(start: Attributes, end: Attributes): Attributes {
  const keep = [
    'mcp.method.name',
    'gen_ai.operation.name',
    'gen_ai.tool.name',
    'gen_ai.prompt.name',
    'error.type',
    'rpc.response.status_code',
    'mcp.protocol.version',
    'network.transport',
    'server.address',
    'server.port',
    'mcp_host.origin',
  ];
  const all = { ...start, ...end };
  return Object.fromEntries(keep.filter((k) => all[k] !== undefined).map((k) => [k, all[k]])) as Attributes;
}

/** An audit record as a log record: every field flattened under `mcp_host.audit.`, masked, arguments only when asked for. */
function auditLogRecord(record: AnyAuditRecord, clean: Cleaner, exportContent: boolean): LogRecord {
  const attributes: Attributes = {};
  const flatten = (value: unknown, key: string, depth: number): void => {
    if (value === undefined || value === null) return;
    if (typeof value === 'string') attributes[key] = clean.text(value);
    else if (typeof value === 'number' || typeof value === 'boolean') attributes[key] = value;
    else if (Array.isArray(value) || depth >= 4) attributes[key] = cleanJson(value, clean);
    else for (const [k, v] of Object.entries(value as Record<string, unknown>)) flatten(v, `${key}.${k}`, depth + 1);
  };
  const {
    arguments: args,
    fenced,
    trace: ids,
    ...rest
  } = record as AnyAuditRecord & { arguments?: unknown; fenced?: unknown; trace?: unknown };
  for (const [k, v] of Object.entries(rest)) flatten(v, `mcp_host.audit.${k}`, 1);
  if (exportContent) {
    if (args !== undefined) attributes['mcp_host.audit.arguments'] = cleanJson(args, clean);
    if (fenced !== undefined) attributes['mcp_host.audit.fenced'] = cleanJson(fenced, clean);
  }
  const request = record.kind === undefined ? record : undefined;
  if (request) {
    attributes['mcp.method.name'] = request.method;
    if (request.method === 'tools/call' && request.name) attributes['gen_ai.tool.name'] = clean.text(request.name);
  }
  const refused = request?.outcome.kind === 'not-sent';
  const body = request
    ? `${request.origin} ${request.method}${request.name ? ` ${clean.text(request.name)}` : ''}: ${request.decision}, ${request.outcome.kind}`
    : (record.kind ?? 'audit');
  const context = traceIds(ids);
  return {
    eventName: 'mcp_host.audit',
    timestamp: new Date(record.time),
    severityNumber: refused ? SeverityNumber.WARN : SeverityNumber.INFO,
    severityText: refused ? 'WARN' : 'INFO',
    body,
    attributes,
    ...(context ? { context } : {}),
  };
}

/** The span a record's `trace` names, as the context its log record is emitted in (so the log record carries its ids). */
function traceIds(ids: unknown): Context | undefined {
  const t = ids as { traceId?: unknown; spanId?: unknown } | undefined;
  if (typeof t?.traceId !== 'string' || typeof t.spanId !== 'string') return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: t.traceId, spanId: t.spanId, traceFlags: 1, isRemote: false });
}
