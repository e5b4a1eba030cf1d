import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { McpClient, StdioTransport, type Tool } from '../../src/core';
import { AuditLog } from '../../src/core/policy/audit';
import { verifyAuditFile } from '../../src/core/policy/auditVerify';
import { thisMachine } from '../../src/core/policy/gate';
import { GatedServer, type GatedOrigin } from '../../src/core/policy/gated';
import { createMasker } from '../../src/core/scan/mask';
import type { AuditRecord } from '../../src/core/policy/types';
import {
  exportForEditor,
  exportFromEnvironment,
  exportFromSettings,
  type ExportConfig,
  type OtlpProtocol,
} from '../../src/core/telemetry/config';
import { cleanerOf, type TelemetryExporter } from '../../src/core/telemetry/exporter';
import { startExporter } from '../../src/core/telemetry/load';
import { traceContextOf } from '../../src/core/protocol/traceContext';
import { ChatGateway } from '../../src/core/gateway/sdkGateway';
import { UPSTREAM, gatewayClient, relayClient, share, upstreamHandle } from '../helpers/gateway';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedLog } from '../helpers/otlpReceiver';
import { ROOT } from '../helpers/servers';

const SECRET = 'ghp_' + 'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER = { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vscode=abc' };

function config(url: string, protocol: OtlpProtocol = 'http/protobuf', more: Partial<ExportConfig> = {}): ExportConfig {
  const signal = (s: string) => ({ url: `${url}/v1/${s}`, protocol, headers: { Authorization: `Bearer ${SECRET}` } });
  return {
    signals: { traces: signal('traces'), logs: signal('logs'), metrics: signal('metrics') },
    serviceName: 'mcp-host-test',
    resource: {},
    exportContent: false,
    ...more,
  };
}

const exporters: TelemetryExporter[] = [];
function exporter(cfg: ExportConfig, errors: string[] = []): TelemetryExporter {
  const made = startExporter({
    config: cfg,
    clean: cleanerOf((t) => t, createMasker().masker),
    onError: (m) => void errors.push(m),
    scheduledDelayMs: 20,
    metricIntervalMs: 60_000,
  });
  exporters.push(made);
  return made;
}

interface Upstream {
  client: McpClient;
  log: string;
  calls(): Array<{ tool: string; meta?: Record<string, unknown> }>;
}

async function upstream(): Promise<Upstream> {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-otel-')), 'calls.jsonl');
  const client = new McpClient(
    new StdioTransport({
      command: process.execPath,
      args: [UPSTREAM],
      env: { ...process.env, GATEWAY_UPSTREAM_CALL_LOG: log },
      shutdownGraceMs: 300,
    }),
  );
  await client.connect();
  clients.push(client);
  return {
    client,
    log,
    calls: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { tool: string; meta?: Record<string, unknown> })
        : [],
  };
}
const clients: McpClient[] = [];

function gate(
  up: Upstream,
  origin: GatedOrigin,
  options: Partial<ConstructorParameters<typeof GatedServer>[2]> = {},
  roots = ['/work/project'],
) {
  return new GatedServer({ name: 'up', rawClient: up.client }, origin, {
    context: () => ({
      policy: { tools: {}, autoApprove: [], trustAnnotations: true },
      alwaysAllowed: false,
      fence: 'block',
      roots: roots.map((r) => ({ uri: `file://${r}` })),
      machine: thisMachine(),
    }),
    server: () => ({ name: 'up', scope: 'user', definition: 'd'.repeat(64) }),
    ...options,
  });
}

/** The records of an audit file whose chain is intact. */
async function recordsOf(file: string): Promise<AuditRecord[]> {
  const verdict = await verifyAuditFile(file);
  assert.ok(verdict.ok, verdict.ok ? '' : verdict.reason);
  return verdict.records as AuditRecord[];
}

const tool = (name: string, more: Partial<Tool> = {}): Tool => ({ name, inputSchema: { type: 'object' }, ...more });

describe('telemetry: spans, metrics and audit log records over OTLP', function () {
  this.timeout(30_000);
  let receiver: OtlpReceiver | undefined;

  afterEach(async () => {
    await Promise.all(exporters.splice(0).map((e) => e.shutdown(2000)));
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await receiver?.close();
    receiver = undefined;
  });

  describe('trace context in _meta', () => {
    it('takes a W3C traceparent, and a well-formed tracestate beside it', () => {
      assert.deepEqual(traceContextOf({ traceparent: CALLER.traceparent, tracestate: 'a=1, b=2' }), {
        traceparent: CALLER.traceparent,
        tracestate: 'a=1,b=2',
      });
      assert.deepEqual(traceContextOf({ traceparent: CALLER.traceparent, tracestate: 'no equals sign' }), {
        traceparent: CALLER.traceparent,
      });
    });

    it('refuses what is not one: zero ids, version ff, upper case, extra fields on version 00, non-strings', () => {
      for (const bad of [
        `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`,
        `00-${CALLER_TRACE}-${'0'.repeat(16)}-01`,
        `ff-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        `00-${CALLER_TRACE.toUpperCase()}-${CALLER_SPAN}-01`,
        `${CALLER.traceparent}-extra`,
        42,
        'x'.repeat(600),
      ])
        assert.equal(traceContextOf({ traceparent: bad }), undefined, String(bad));
      assert.equal(traceContextOf({ traceparent: CALLER.traceparent, tracestate: 'k=v,'.repeat(40) })?.tracestate, undefined);
    });
  });

  describe('the standard variables', () => {
    it('read the endpoint, the per-signal endpoints, headers, protocol, service name and resource', () => {
      const { config: c, problems } = exportFromEnvironment({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'http://127.0.0.1:9999/logs',
        OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc,x-team=blue',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'team-agents',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=dev,team=blue',
        OTEL_METRICS_EXPORTER: 'none',
      });
      assert.deepEqual(problems, []);
      assert.equal(c?.signals.traces?.url, 'http://127.0.0.1:4318/v1/traces');
      assert.equal(c?.signals.logs?.url, 'http://127.0.0.1:9999/logs');
      assert.equal(c?.signals.metrics, undefined);
      assert.equal(c?.signals.traces?.protocol, 'http/json');
      assert.deepEqual(c?.signals.traces?.headers, { Authorization: 'Bearer abc', 'x-team': 'blue' });
      assert.equal(c?.serviceName, 'team-agents');
      assert.deepEqual(c?.resource, { 'deployment.environment': 'dev', team: 'blue' });
      assert.equal(c?.exportContent, false);
    });

    it('read compression and the TLS files, per signal or for all, and name a compression they do not know', () => {
      const { config: c, problems } = exportFromEnvironment({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        OTEL_EXPORTER_OTLP_LOGS_COMPRESSION: 'none',
        OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: 'zstd',
        OTEL_EXPORTER_OTLP_CERTIFICATE: '/etc/team/ca.pem',
        OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE: '/etc/team/me.pem',
        OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: '/etc/team/me.key',
      });
      assert.equal(c?.signals.traces?.compression, 'gzip');
      assert.equal(c?.signals.logs?.compression, 'none');
      assert.equal(c?.signals.metrics?.compression, undefined);
      assert.deepEqual(problems, ['OTEL_EXPORTER_OTLP_METRICS_COMPRESSION=zstd is not supported (gzip or none); nothing is compressed']);
      assert.deepEqual(c?.signals.traces?.tls, { ca: '/etc/team/ca.pem', cert: '/etc/team/me.pem', key: '/etc/team/me.key' });
      assert.deepEqual(c?.signals.logs?.tls, { ca: '/etc/team/ca.pem' });
    });

    it('export nothing without an endpoint, with OTEL_SDK_DISABLED, or with a protocol MCP Host does not speak (and say why)', () => {
      assert.equal(exportFromEnvironment({}).config, undefined);
      assert.equal(exportFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_SDK_DISABLED: 'true' }).config, undefined);
      const grpc = exportFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
      assert.equal(grpc.config, undefined);
      assert.match(grpc.problems.join(), /grpc is not supported/);
      const bad = exportFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url', OTEL_EXPORTER_OTLP_HEADERS: `${SECRET}` });
      assert.equal(bad.config, undefined);
      assert.doesNotMatch(bad.problems.join(), new RegExp(SECRET), 'a malformed header is not repeated');
    });

    describe('the editor: settings win, its own OTEL_* variables fill in', () => {
      const ENV = {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${SECRET}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'team-editor',
        OTEL_RESOURCE_ATTRIBUTES: 'team=blue,mcp_host.host=spoofed',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      };
      const OWN = { 'service.version': '1.0.0', 'mcp_host.host': 'vscode' };
      const settings = (over: Partial<Parameters<typeof exportForEditor>[0]> = {}): Parameters<typeof exportForEditor>[0] => ({
        endpoint: undefined,
        locked: false,
        protocol: undefined,
        headers: {},
        exportContent: undefined,
        resource: OWN,
        ...over,
      });

      it('with no endpoint setting, the variables decide where it goes, as for the CLI', () => {
        const { config: c, source } = exportForEditor(settings(), ENV);
        assert.equal(source, 'environment');
        assert.equal(c?.signals.traces?.url, 'http://127.0.0.1:4318/v1/traces');
        assert.equal(c?.signals.traces?.protocol, 'http/json');
        assert.deepEqual(c?.signals.traces?.headers, { Authorization: `Bearer ${SECRET}` });
        assert.equal(c?.serviceName, 'team-editor');
        assert.deepEqual(
          c?.resource,
          { team: 'blue', 'service.version': '1.0.0', 'mcp_host.host': 'vscode' },
          "MCP Host's own attributes win",
        );
        assert.equal(c?.exportContent, true);
        assert.equal(exportForEditor(settings({ exportContent: false }), ENV).config?.exportContent, false, 'the setting, when set, wins');
        assert.equal(exportForEditor(settings(), {}).config, undefined, 'nothing set: nothing exported');
        assert.equal(exportForEditor(settings(), { ...ENV, OTEL_SDK_DISABLED: 'true' }).config, undefined);
      });

      it("with the endpoint setting, the settings decide, and no variable's endpoint or token goes with them", () => {
        const { config: c, source } = exportForEditor(
          settings({ endpoint: 'https://collector.example/otlp', headers: { 'x-key': 'own' }, exportContent: undefined }),
          { ...ENV, OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://elsewhere.example/v1/traces' },
        );
        assert.equal(source, 'settings');
        assert.equal(c?.signals.traces?.url, 'https://collector.example/otlp/v1/traces');
        assert.equal(c?.signals.traces?.protocol, 'http/protobuf', "the setting's default, not the variable");
        assert.deepEqual(c?.signals.traces?.headers, { 'x-key': 'own' }, "another collector's token is not sent here");
        assert.equal(c?.exportContent, false, 'the variable does not turn content export on under the settings');
        assert.equal(c?.serviceName, 'team-editor', 'the service name fills in');
        assert.deepEqual(c?.resource, { team: 'blue', 'service.version': '1.0.0', 'mcp_host.host': 'vscode' });
      });

      it('an endpoint the organisation locks (even to nothing) leaves every variable out', () => {
        assert.equal(exportForEditor(settings({ locked: true, endpoint: '' }), ENV).config, undefined, 'locked off stays off');
        const { config: c } = exportForEditor(settings({ locked: true, endpoint: 'https://org.example' }), ENV);
        assert.equal(c?.signals.logs?.url, 'https://org.example/v1/logs');
        assert.equal(c?.serviceName, 'mcp-host');
        assert.deepEqual(c?.resource, OWN);
        assert.deepEqual(c?.signals.logs?.headers, {});
      });
    });

    it('the editor settings: one base endpoint for the three signals', () => {
      const { config: c } = exportFromSettings({
        endpoint: 'https://collector.example/otlp',
        protocol: 'http/json',
        headers: {},
        exportContent: true,
      });
      assert.equal(c?.signals.metrics?.url, 'https://collector.example/otlp/v1/metrics');
      assert.equal(exportFromSettings({ endpoint: '', protocol: undefined, headers: {}, exportContent: false }).config, undefined);
    });
  });

  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`a gated tool call is a CLIENT span with the MCP conventions that continues the caller's trace and passes its own to the server (${protocol})`, async () => {
      receiver = await startOtlpReceiver();
      const up = await upstream();
      const telemetry = exporter(config(receiver.url, protocol));
      const gated = gate(up, 'chat', { telemetry });
      const run = await gated.callTool(tool('echo', { annotations: { readOnlyHint: true } }), { text: 'hi' }, undefined, {
        caller: { trace: CALLER, conversationId: 'conv-1', client: { name: 'Visual Studio Code', version: '1.139.1' } },
      });
      assert.ok(run.sent);
      await telemetry.flush();
      await receiver.waitFor(() => receiver!.spans.length >= 1 && receiver!.points.length >= 1);
      const [span] = receiver.spans;
      assert.equal(span.name, 'tools/call echo');
      assert.equal(span.kind, 3, 'SpanKind.CLIENT');
      assert.equal(span.traceId, CALLER_TRACE, "VS Code's trace goes on");
      assert.equal(span.parentSpanId, CALLER_SPAN, "the chat's span is the parent");
      assert.equal(span.scope, 'mcp-host');
      assert.equal(span.resource['service.name'], 'mcp-host-test');
      const a = span.attributes;
      assert.equal(a['mcp.method.name'], 'tools/call');
      assert.equal(a['gen_ai.operation.name'], 'execute_tool');
      assert.equal(a['gen_ai.tool.name'], 'echo');
      assert.equal(a['gen_ai.conversation.id'], 'conv-1');
      assert.equal(a['mcp_host.origin'], 'chat');
      assert.equal(a['mcp_host.client.name'], 'Visual Studio Code');
      assert.equal(a['mcp_host.decision'], 'allowed');
      assert.equal(a['mcp_host.outcome'], 'ok');
      assert.equal(a['mcp.protocol.version'], up.client.protocolVersion);
      assert.equal(a['network.transport'], 'pipe');
      assert.match(String(a['jsonrpc.request.id']), /^\d+$/);
      assert.equal(a['error.type'], undefined);
      assert.equal(a['gen_ai.tool.call.arguments'], undefined, 'arguments are not exported unless asked for');
      // The server received MCP Host's span as its parent, in the spec's place.
      const [call] = up.calls();
      assert.equal(call.meta?.traceparent, `00-${CALLER_TRACE}-${span.spanId}-01`);
      assert.equal(call.meta?.tracestate, 'vscode=abc');
      // The duration metric beside it.
      const point = receiver.points.find((p) => p.metric === 'mcp.client.operation.duration');
      assert.ok(point, 'mcp.client.operation.duration');
      assert.equal(point.unit, 's');
      assert.equal(point.count, 1);
      assert.equal(point.attributes['gen_ai.tool.name'], 'echo');
      assert.equal(point.attributes['jsonrpc.request.id'], undefined, 'no high-cardinality attribute on the metric');
      // The collector's token went in the headers, and nowhere in the bodies.
      assert.equal(receiver.requests[0].headers.authorization, `Bearer ${SECRET}`);
      assert.ok(!receiver.everything().includes(SECRET));
    });
  }

  it("the exporter sends what it is configured with, and nothing the process's OTEL_* variables add (another collector's token)", async () => {
    const other = 'other-collector-' + 'Q1w2E3r4T5y6';
    const saved = { ...process.env };
    // The SDK's own exporter classes read these beneath their configuration; MCP Host's must not.
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `x-other=${other}`;
    process.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS = `x-other-traces=${other}`;
    process.env.OTEL_EXPORTER_OTLP_COMPRESSION = 'gzip';
    try {
      receiver = await startOtlpReceiver();
      const up = await upstream();
      const plain = exporter(config(receiver.url));
      await gate(up, 'cli', { telemetry: plain }).callTool(tool('echo'), { text: 'hi' });
      await plain.flush();
      await receiver.waitFor(() => receiver!.requests.some((r) => r.path === '/v1/traces'));
      for (const r of receiver.requests) {
        assert.equal(r.headers['x-other'], undefined, r.path);
        assert.equal(r.headers['x-other-traces'], undefined, r.path);
        assert.equal(r.headers['content-encoding'], undefined, 'not compressed unless configured');
        assert.equal(r.headers.authorization, `Bearer ${SECRET}`);
      }
      // Configured (the CLI's OTEL_EXPORTER_OTLP_COMPRESSION, read by ./config.ts): gzipped, and the collector reads it.
      receiver.requests.length = 0;
      const cfg = config(receiver.url);
      for (const s of Object.values(cfg.signals)) s!.compression = 'gzip';
      const gzipped = exporter(cfg);
      await gate(up, 'cli', { telemetry: gzipped }).callTool(tool('echo'), { text: 'zipped' });
      await gzipped.flush();
      await receiver.waitFor(() => receiver!.requests.some((r) => r.path === '/v1/traces'));
      assert.equal(receiver.requests.find((r) => r.path === '/v1/traces')?.headers['content-encoding'], 'gzip');
      assert.ok(receiver.spans.length >= 2, 'both exports decoded');
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    }
  });

  it('a TLS file that cannot be read is reported by its role and path, once, and the export goes on without it', async () => {
    receiver = await startOtlpReceiver();
    const cfg = config(receiver.url);
    cfg.signals = { traces: { ...cfg.signals.traces!, tls: { ca: path.join(os.tmpdir(), 'no-such-ca-for-mcp-host.pem') } } };
    const errors: string[] = [];
    const telemetry = exporter(cfg, errors);
    const up = await upstream();
    await gate(up, 'cli', { telemetry }).callTool(tool('echo'), { text: 'hi' });
    await telemetry.flush();
    await receiver.waitFor(() => receiver!.spans.length >= 1);
    assert.deepEqual(errors, [
      `telemetry: the certificate ${path.join(os.tmpdir(), 'no-such-ca-for-mcp-host.pem')} cannot be read (ENOENT); it is not used`,
    ]);
  });

  it('an isError result is error.type tool_error; a refused call never reaches the server and its span says why', async () => {
    receiver = await startOtlpReceiver();
    const up = await upstream();
    const telemetry = exporter(config(receiver.url));
    const gated = gate(up, 'cli', { telemetry });
    const failed = await gated.callTool(tool('no_such_tool'), {}, undefined, { unlisted: true });
    assert.ok(failed.sent && failed.result.result.isError);
    const fenced = await gated.callTool(tool('read_file'), { path: '/etc/passwd' });
    assert.equal(fenced.sent, false);
    await telemetry.flush();
    await receiver.waitFor(() => receiver!.spans.length >= 2);
    const byName = Object.fromEntries(receiver.spans.map((s) => [s.name, s]));
    assert.equal(byName['tools/call no_such_tool'].attributes['error.type'], 'tool_error');
    assert.equal(byName['tools/call no_such_tool'].status.code, 2, 'ERROR');
    const refused = byName['tools/call read_file'];
    assert.equal(refused.attributes['mcp_host.decision'], 'fenced');
    assert.equal(refused.attributes['mcp_host.outcome'], 'not-sent');
    assert.equal(refused.attributes['error.type'], 'mcp_host.fenced');
    assert.match(String(refused.attributes['mcp_host.reason']), /outside the roots/);
    assert.equal(refused.attributes['jsonrpc.request.id'], undefined);
    assert.deepEqual(
      up.calls().map((c) => c.tool),
      ['no_such_tool'],
      'the fenced call was not sent',
    );
    // A span with no caller's trace starts its own, and still goes to the server.
    assert.equal(byName['tools/call no_such_tool'].parentSpanId, '');
    assert.equal(
      up.calls()[0].meta?.traceparent,
      `00-${byName['tools/call no_such_tool'].traceId}-${byName['tools/call no_such_tool'].spanId}-01`,
    );
  });

  it('each audit record is a log record with its hash, the previous one and its MAC, joined to its span; arguments stay local', async () => {
    receiver = await startOtlpReceiver();
    const up = await upstream();
    const telemetry = exporter(config(receiver.url));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-otel-audit-'));
    const file = path.join(dir, 'audit.jsonl');
    const key = Buffer.alloc(32, 7);
    const audit = new AuditLog({ file, key, masker: createMasker().masker, onRecords: (r) => telemetry.auditRecords(r) });
    const gated = gate(up, 'person', { telemetry, audit, ask: async () => 'once' });
    await gated.callTool(tool('echo'), { text: `token ${SECRET}` });
    await gated.callTool(tool('read_file'), { path: '/etc/shadow' });
    await audit.flushed();
    await telemetry.flush();
    await receiver.waitFor(() => receiver!.logs.length >= 2 && receiver!.spans.length >= 2);
    const verdict = await verifyAuditFile(file, { key });
    assert.ok(verdict.ok);
    const records = verdict.records as AuditRecord[];
    assert.equal(records.length, 2);
    for (const [i, record] of records.entries()) {
      const log: ReceivedLog | undefined = receiver.logs.find((l) => l.attributes['mcp_host.audit.hash'] === record.hash);
      assert.ok(log, `record ${i} exported`);
      // (the event name is checked over JSON below: these proto definitions predate LogRecord.event_name)
      assert.match(String(log.body), new RegExp(`^person tools/call (echo|read_file): ${record.decision}`));
      assert.equal(log.attributes['mcp_host.audit.prev'], record.prev);
      assert.equal(log.attributes['mcp_host.audit.mac'], record.mac);
      assert.equal(log.attributes['mcp_host.audit.decision'], record.decision);
      assert.equal(log.attributes['mcp_host.audit.server.definition'], 'd'.repeat(64));
      assert.equal(log.attributes['mcp_host.audit.arguments'], undefined);
      assert.equal(log.attributes['mcp_host.audit.fenced'], undefined);
      // The record names its span, and the log record carries the same ids.
      const span = receiver.spans.find((s) => s.spanId === record.trace?.spanId);
      assert.ok(span, 'the span of the record');
      assert.equal(log.traceId, record.trace?.traceId);
      assert.equal(log.spanId, record.trace?.spanId);
    }
    assert.equal(
      receiver.logs[1].attributes['mcp_host.audit.prev'],
      receiver.logs[0].attributes['mcp_host.audit.hash'],
      'the links are unbroken',
    );
    assert.equal(receiver.logs.find((l) => l.attributes['mcp_host.audit.decision'] === 'fenced')?.severityText, 'WARN');
    const everything = receiver.everything();
    assert.ok(!everything.includes(SECRET), 'no secret in any export');
    assert.ok(!everything.includes('/etc/shadow'), 'a fenced path is an argument: not exported');
  });

  it('asked for, arguments and results go out masked', async () => {
    receiver = await startOtlpReceiver();
    const up = await upstream();
    const telemetry = exporter(config(receiver.url, 'http/json', { exportContent: true }));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-otel-content-'));
    const audit = new AuditLog({
      file: path.join(dir, 'audit.jsonl'),
      masker: createMasker().masker,
      onRecords: (r) => telemetry.auditRecords(r),
    });
    const gated = gate(up, 'cli', { telemetry, audit });
    await gated.callTool(tool('echo'), { text: `token ${SECRET}` });
    await gated.callTool(tool('leak'), {});
    await audit.flushed();
    await telemetry.flush();
    await receiver.waitFor(() => receiver!.logs.length >= 2 && receiver!.spans.length >= 2);
    const echo = receiver.spans.find((s) => s.name === 'tools/call echo')!;
    assert.match(String(echo.attributes['gen_ai.tool.call.arguments']), /token \[masked: [^\]]+\]/);
    assert.match(String(echo.attributes['gen_ai.tool.call.result']), /\[masked/);
    const leak = receiver.spans.find((s) => s.name === 'tools/call leak')!;
    assert.ok(String(leak.attributes['gen_ai.tool.call.result']).length > 0);
    assert.match(String(receiver.logs[0].attributes['mcp_host.audit.arguments']), /\[masked/);
    assert.equal(receiver.logs[0].eventName, 'mcp_host.audit');
    assert.ok(!receiver.everything().includes(SECRET), 'the secret is masked everywhere it went');
  });

  it("without telemetry the caller's trace context goes to the server unchanged", async () => {
    const up = await upstream();
    const gated = gate(up, 'chat');
    await gated.callTool(tool('echo', { annotations: { readOnlyHint: true } }), { text: 'x' }, undefined, { caller: { trace: CALLER } });
    await gated.callTool(tool('echo', { annotations: { readOnlyHint: true } }), { text: 'y' });
    const [withTrace, without] = up.calls();
    assert.equal(withTrace.meta?.traceparent, CALLER.traceparent);
    assert.equal(withTrace.meta?.tracestate, CALLER.tracestate);
    assert.equal(without.meta?.traceparent, undefined, 'no trace is made up');
  });

  it('a collector that is down: the call succeeds, the local audit is complete, stopping is bounded, one report', async () => {
    receiver = await startOtlpReceiver();
    const down = receiver.url;
    await receiver.close();
    receiver = undefined;
    const up = await upstream();
    const errors: string[] = [];
    const telemetry = exporter(config(down), errors);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-otel-down-'));
    const file = path.join(dir, 'audit.jsonl');
    const audit = new AuditLog({ file, masker: createMasker().masker, onRecords: (r) => telemetry.auditRecords(r) });
    const gated = gate(up, 'cli', { telemetry, audit });
    for (let i = 0; i < 5; i++) assert.ok((await gated.callTool(tool('echo'), { text: String(i) })).sent);
    await audit.flushed();
    const verdict = await verifyAuditFile(file);
    assert.ok(verdict.ok && verdict.records.length === 5, 'every record is on disk');
    await telemetry.shutdown(2000);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0], /telemetry could not be exported to http:\/\/127\.0\.0\.1:\d+/);
    assert.ok(!errors[0].includes(SECRET));
  });

  it('a collector that never answers: shutdown gives up at its bound and says so', async () => {
    receiver = await startOtlpReceiver(() => 'hang');
    const up = await upstream();
    const errors: string[] = [];
    const telemetry = exporter(config(receiver.url), errors);
    assert.ok((await gate(up, 'cli', { telemetry }).callTool(tool('echo'), { text: 'x' })).sent);
    assert.equal(await telemetry.shutdown(500), false);
    assert.equal(errors.length, 1);
  });

  for (const via of ['relay', 'http'] as const) {
    it(`a chat call through the gateway (${via}) continues the chat's trace, names its conversation and client, and the server sees MCP Host's span`, async () => {
      execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT });
      receiver = await startOtlpReceiver();
      const telemetry = exporter(config(receiver.url));
      const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-otel-gw-')), 'calls.jsonl');
      const handle = upstreamHandle({ env: { GATEWAY_UPSTREAM_CALL_LOG: log } });
      await handle.start();
      const { forwarder } = share(handle, { telemetry });
      const gateway = await ChatGateway.start({ token: 'T0KEN-for-tests', forwarderFor: (id) => (id === 'up' ? forwarder : undefined) });
      try {
        const chat =
          via === 'relay'
            ? await relayClient(gateway.relayAddress, 'up', 'T0KEN-for-tests')
            : await gatewayClient(gateway.address, ChatGateway.pathOf('up'), 'T0KEN-for-tests');
        const result = await chat.callTool({
          name: 'echo',
          arguments: { text: 'hi' },
          _meta: { ...CALLER, 'vscode.conversationId': 'c-42' },
        });
        assert.equal((result.content as Array<{ text: string }>)[0].text, 'hi');
        await chat.close();
        await telemetry.flush();
        await receiver.waitFor(() => receiver!.spans.length >= 1);
        const [span] = receiver.spans;
        assert.equal(span.name, 'tools/call echo');
        assert.equal(span.traceId, CALLER_TRACE);
        assert.equal(span.parentSpanId, CALLER_SPAN);
        assert.equal(span.attributes['mcp_host.origin'], 'chat');
        assert.equal(span.attributes['gen_ai.conversation.id'], 'c-42');
        assert.equal(span.attributes['mcp_host.client.name'], 'gateway-test');
        const [call] = fs
          .readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { meta?: Record<string, unknown> });
        assert.equal(call.meta?.traceparent, `00-${CALLER_TRACE}-${span.spanId}-01`, "the server received MCP Host's span as its parent");
        assert.equal(call.meta?.tracestate, CALLER.tracestate);
        assert.equal(call.meta?.['vscode.conversationId'], undefined, "the chat's own _meta is not forwarded");
      } finally {
        await gateway.close();
        await handle.stop();
      }
    });
  }

  describe('dist/cli.js with the standard variables', () => {
    before(() => execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT }));

    function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
      return new Promise((resolve) => {
        const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), ...args], { env: { ...process.env, ...env } });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    }

    it('exports the call, its audit record and the metric, and continues a TRACEPARENT-less run as a new trace', async () => {
      receiver = await startOtlpReceiver();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-otel-cli-'));
      const audit = path.join(dir, 'audit.jsonl');
      const r = await runCli(
        [
          '--stdio',
          `${JSON.stringify(process.execPath)} ${JSON.stringify(UPSTREAM)}`,
          '--audit',
          audit,
          'call',
          'echo',
          '{"text":"hello"}',
        ],
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${SECRET}`,
          OTEL_SERVICE_NAME: 'cli-test',
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '', 'a collector that answers costs no warning');
      await receiver.waitFor(() => receiver!.spans.length >= 1 && receiver!.logs.length >= 1 && receiver!.points.length >= 1);
      const [span] = receiver.spans;
      assert.equal(span.name, 'tools/call echo');
      assert.equal(span.attributes['mcp_host.origin'], 'cli');
      assert.equal(span.attributes['mcp_host.client.name'], 'mcp-host-cli');
      assert.equal(span.resource['service.name'], 'cli-test');
      const [record] = await recordsOf(audit);
      assert.equal(receiver.logs[0].attributes['mcp_host.audit.hash'], record.hash);
      assert.equal(record.trace?.spanId, span.spanId);
      assert.ok(!receiver.everything().includes(SECRET));
    });

    it('a collector that is down costs one warning: the call succeeds and the audit is complete', async () => {
      receiver = await startOtlpReceiver();
      const down = receiver.url;
      await receiver.close();
      receiver = undefined;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-otel-cli-down-'));
      const audit = path.join(dir, 'audit.jsonl');
      const r = await runCli(
        ['--stdio', `${JSON.stringify(process.execPath)} ${JSON.stringify(UPSTREAM)}`, '--audit', audit, 'call', 'echo', '{"text":"x"}'],
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: down,
          OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${SECRET}`,
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).content[0].text, 'x');
      assert.equal(r.stderr.match(/telemetry could not be exported/g)?.length, 1, r.stderr);
      assert.ok(!r.stderr.includes(SECRET));
      assert.equal((await recordsOf(audit)).length, 1);
    });
  });
});
