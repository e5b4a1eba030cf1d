/**
 * Where a team's telemetry goes, read from the standard OpenTelemetry variables (the CLI and
 * `serve`) or from the editor's settings. No OpenTelemetry code here: the exporter (./otel.ts) is
 * loaded only once this finds an endpoint, so nothing leaves the machine unless someone set one.
 */

export type Signal = 'traces' | 'logs' | 'metrics';
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export const SIGNALS: readonly Signal[] = ['traces', 'logs', 'metrics'];
export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

/** One signal's destination. */
export interface SignalExport {
  /** The whole URL the signal is posted to (`…/v1/traces`). */
  url: string;
  protocol: OtlpProtocol;
  /** Sent with every export (a collector's token): secrets, never shown or logged. */
  headers: Record<string, string>;
  /** `gzip` compresses what is sent (OTEL_EXPORTER_OTLP_COMPRESSION); none by default. */
  compression?: 'gzip' | 'none';
  /** TLS files, read when the exporter starts: the collector's CA, and a client certificate and key (OTEL_EXPORTER_OTLP_CERTIFICATE, …). */
  tls?: { ca?: string; cert?: string; key?: string };
}

export interface ExportConfig {
  /** A signal without an entry is not exported. */
  signals: Partial<Record<Signal, SignalExport>>;
  serviceName: string;
  /** More resource attributes (OTEL_RESOURCE_ATTRIBUTES). */
  resource: Record<string, string>;
  /** Arguments and results go in the spans and log records (masked); off unless asked for. */
  exportContent: boolean;
  /** How long one export may take (OTEL_EXPORTER_OTLP_TIMEOUT), in milliseconds. */
  timeoutMs?: number;
}

export const DEFAULT_SERVICE_NAME = 'mcp-host';
const DEFAULT_PROTOCOL: OtlpProtocol = 'http/protobuf';
const SIGNAL_VARIABLE: Record<Signal, string> = { traces: 'TRACES', logs: 'LOGS', metrics: 'METRICS' };

/** What the variables say: a configuration when something is to be exported, and what was wrong with them (said once, on stderr). */
export interface EnvironmentExport {
  config?: ExportConfig;
  problems: string[];
}

type Environment = Readonly<Record<string, string | undefined>>;

const isTrue = (value: string | undefined): boolean => value?.trim().toLowerCase() === 'true';

/** `key=value,key2=value2` with percent-encoded values (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES); a malformed pair is named. */
export function parseKeyValues(text: string | undefined, variable: string, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    if (!key) {
      // The pair may be a token: it is not repeated in the message.
      problems.push(`${variable} has an entry that is not key=value; it is ignored`);
      continue;
    }
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      problems.push(`${variable}: the value of ${key} is not percent-encoded correctly; it is ignored`);
    }
  }
  return out;
}

/** An http(s) URL, or why not. */
function checkedUrl(text: string, variable: string, problems: string[]): string | undefined {
  try {
    const url = new URL(text.trim());
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {
    // Named below.
  }
  problems.push(`${variable} is not an http(s) URL; nothing is exported for it`);
  return undefined;
}

/** `base` with the signal's path (`v1/traces`) appended, as OTEL_EXPORTER_OTLP_ENDPOINT means it. */
export function signalUrl(base: string, signal: Signal): string {
  return `${base.endsWith('/') ? base : `${base}/`}v1/${signal}`;
}

function protocolOf(text: string | undefined, variable: string, problems: string[]): OtlpProtocol | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  if ((OTLP_PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
  problems.push(`${variable}=${value} is not supported (http/protobuf or http/json); nothing is exported`);
  return undefined;
}

/** One signal's variable, else the general one (`OTEL_EXPORTER_OTLP_TRACES_X`, else `OTEL_EXPORTER_OTLP_X`), with the name it came from. */
function signalOrGeneral(env: Environment, name: string, suffix: string): { value: string; variable: string } | undefined {
  for (const variable of [`OTEL_EXPORTER_OTLP_${name}_${suffix}`, `OTEL_EXPORTER_OTLP_${suffix}`]) {
    const value = env[variable]?.trim();
    if (value) return { value, variable };
  }
  return undefined;
}

function compressionOf(env: Environment, name: string, problems: string[]): 'gzip' | 'none' | undefined {
  const set = signalOrGeneral(env, name, 'COMPRESSION');
  if (!set) return undefined;
  if (set.value === 'gzip' || set.value === 'none') return set.value;
  problems.push(`${set.variable}=${set.value} is not supported (gzip or none); nothing is compressed`);
  return undefined;
}

/** The TLS files the variables name for a signal: paths, read (relative to the current folder) when the exporter starts. */
function tlsOf(env: Environment, name: string): SignalExport['tls'] {
  const ca = signalOrGeneral(env, name, 'CERTIFICATE')?.value;
  const cert = signalOrGeneral(env, name, 'CLIENT_CERTIFICATE')?.value;
  const key = signalOrGeneral(env, name, 'CLIENT_KEY')?.value;
  if (!ca && !cert && !key) return undefined;
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

/**
 * The standard variables: OTEL_EXPORTER_OTLP_ENDPOINT (and _TRACES_, _LOGS_, _METRICS_ENDPOINT),
 * OTEL_EXPORTER_OTLP_HEADERS (and per signal), OTEL_EXPORTER_OTLP_PROTOCOL (and per signal),
 * OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_COMPRESSION, OTEL_EXPORTER_OTLP_CERTIFICATE,
 * OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (and per signal),
 * OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED,
 * OTEL_TRACES_EXPORTER / OTEL_LOGS_EXPORTER / OTEL_METRICS_EXPORTER=none, and
 * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true for arguments and results.
 */
export function exportFromEnvironment(env: Environment): EnvironmentExport {
  const problems: string[] = [];
  if (isTrue(env.OTEL_SDK_DISABLED)) return { problems };
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const baseUrl = base ? checkedUrl(base, 'OTEL_EXPORTER_OTLP_ENDPOINT', problems) : undefined;
  const commonHeaders = parseKeyValues(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS', problems);
  const commonProtocol = protocolOf(env.OTEL_EXPORTER_OTLP_PROTOCOL, 'OTEL_EXPORTER_OTLP_PROTOCOL', problems);
  if (env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() && !commonProtocol) return { problems };
  const signals: ExportConfig['signals'] = {};
  for (const signal of SIGNALS) {
    const name = SIGNAL_VARIABLE[signal];
    if (env[`OTEL_${name}_EXPORTER`]?.trim().toLowerCase() === 'none') continue;
    const own = env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`]?.trim();
    const url = own ? checkedUrl(own, `OTEL_EXPORTER_OTLP_${name}_ENDPOINT`, problems) : baseUrl && signalUrl(baseUrl, signal);
    if (!url) continue;
    const protocolVariable = `OTEL_EXPORTER_OTLP_${name}_PROTOCOL`;
    const protocol = protocolOf(env[protocolVariable], protocolVariable, problems);
    if (env[protocolVariable]?.trim() && !protocol) continue;
    const headersVariable = `OTEL_EXPORTER_OTLP_${name}_HEADERS`;
    const compression = compressionOf(env, name, problems);
    const tls = tlsOf(env, name);
    signals[signal] = {
      url,
      protocol: protocol ?? commonProtocol ?? DEFAULT_PROTOCOL,
      headers: { ...commonHeaders, ...parseKeyValues(env[headersVariable], headersVariable, problems) },
      ...(compression ? { compression } : {}),
      ...(tls ? { tls } : {}),
    };
  }
  if (Object.keys(signals).length === 0) return { problems };
  const timeout = Number(env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return {
    config: {
      signals,
      serviceName: env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME,
      resource: parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES', problems),
      exportContent: isTrue(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
      ...(Number.isFinite(timeout) && timeout > 0 ? { timeoutMs: timeout } : {}),
    },
    problems,
  };
}

/** The editor's settings: one base endpoint for the three signals, the protocol, the headers kept in SecretStorage. */
export function exportFromSettings(settings: {
  endpoint: string | undefined;
  protocol: string | undefined;
  headers: Record<string, string>;
  exportContent: boolean;
  resource?: Record<string, string>;
}): EnvironmentExport {
  const problems: string[] = [];
  const endpoint = settings.endpoint?.trim();
  if (!endpoint) return { problems };
  const base = checkedUrl(endpoint, 'mcpHost.telemetry.endpoint', problems);
  const protocol =
    settings.protocol === undefined ? DEFAULT_PROTOCOL : protocolOf(settings.protocol, 'mcpHost.telemetry.protocol', problems);
  if (!base || !protocol) return { problems };
  const signals: ExportConfig['signals'] = {};
  for (const signal of SIGNALS) signals[signal] = { url: signalUrl(base, signal), protocol, headers: settings.headers };
  return {
    config: {
      signals,
      serviceName: DEFAULT_SERVICE_NAME,
      resource: settings.resource ?? {},
      exportContent: settings.exportContent,
    },
    problems,
  };
}

/** Where the editor's export came from: its settings, or (with no endpoint set) the editor's own OTEL_* variables. */
export type EditorExportSource = 'settings' | 'environment';

/**
 * The editor's export, settings first and the extension host's OTEL_* variables filling in, as
 * everything else a person starts from that shell does with them:
 * - the organisation locks the endpoint (`locked`, its value even empty): its settings alone, no variable counts;
 * - the endpoint setting is set: the settings (endpoint, protocol, headers from the secret storage,
 *   exportContent); the variables add only the service name and resource attributes, never headers
 *   or endpoints meant for another collector, and OTEL_SDK_DISABLED does not undo the setting;
 * - no endpoint setting: the standard variables in full (exportFromEnvironment), with exportContent
 *   from the setting when the person set it.
 */
export function exportForEditor(
  settings: {
    endpoint: string | undefined;
    locked: boolean;
    protocol: string | undefined;
    headers: Record<string, string>;
    /** Undefined when the person did not set it. */
    exportContent: boolean | undefined;
    resource: Record<string, string>;
  },
  env: Environment,
): EnvironmentExport & { source?: EditorExportSource } {
  if (settings.locked || settings.endpoint?.trim()) {
    const { config, problems } = exportFromSettings({ ...settings, exportContent: settings.exportContent ?? false });
    if (!config || settings.locked) return { config, problems, source: 'settings' };
    const envProblems: string[] = [];
    const resource = parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES', envProblems);
    return {
      config: {
        ...config,
        serviceName: env.OTEL_SERVICE_NAME?.trim() || config.serviceName,
        resource: { ...resource, ...config.resource },
      },
      problems: [...problems, ...envProblems],
      source: 'settings',
    };
  }
  const { config, problems } = exportFromEnvironment(env);
  if (!config) return { problems };
  return {
    config: {
      ...config,
      resource: { ...config.resource, ...settings.resource },
      exportContent: settings.exportContent ?? config.exportContent,
    },
    problems,
    source: 'environment',
  };
}

/** Every header value of `config`: what a report about the exporter must never show. */
export function secretsOf(config: ExportConfig): string[] {
  return Object.values(config.signals).flatMap((s) => Object.values(s?.headers ?? {}).filter((v) => v.length >= 4));
}

/** Where it goes, for a message: the endpoints' origins (no path, query or user info). */
export function describeDestination(config: ExportConfig): string {
  const origins = new Set<string>();
  for (const s of Object.values(config.signals)) {
    try {
      origins.add(new URL(s!.url).origin);
    } catch {
      // Checked when it was read.
    }
  }
  return [...origins].join(', ');
}
