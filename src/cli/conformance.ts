import {
  HeadlessRedirectUserAgent,
  ErrorCode,
  HttpTransport,
  McpClient,
  McpError,
  OAuthProvider,
  type ClientHandlers,
  type ElicitRequestParams,
  type ElicitResult,
  type JsonSchemaObject,
  type OAuthProviderOptions,
  type Tool,
  isModernProtocolVersion,
} from '../core';

/**
 * The client entry point of the official conformance suite (`@modelcontextprotocol/conformance`):
 * it runs `mcp-host conformance <server-url>` once per scenario, naming the scenario in
 * MCP_CONFORMANCE_SCENARIO and passing credentials and the like as JSON in MCP_CONFORMANCE_CONTEXT.
 * Everything here is the core used as a host would use it; only the choices a person or a setting
 * would make (which grant, which client id) come from the scenario.
 */

/** The client ID metadata document URL the suite expects in its CIMD scenario. */
const CONFORMANCE_CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
/** The suite gives a client 30 s per scenario; the whole authorization flow runs inside the first request. */
const REQUEST_TIMEOUT_MS = 28_000;

type Context = Record<string, unknown>;

export async function runConformance(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const url = argv[0];
  if (!url) {
    err.write('Usage: mcp-host conformance <server-url>   (scenario in MCP_CONFORMANCE_SCENARIO, context in MCP_CONFORMANCE_CONTEXT)\n');
    return 2;
  }
  const scenario = env.MCP_CONFORMANCE_SCENARIO ?? '';
  let context: Context;
  try {
    context = parseContext(env.MCP_CONFORMANCE_CONTEXT);
  } catch (error) {
    err.write(`error: MCP_CONFORMANCE_CONTEXT is not a JSON object: ${(error as Error).message}\n`);
    return 2;
  }
  const log = (line: string) => err.write(`[conformance] ${line}\n`);
  // The suite names the revision a scenario is scored for; a 2026-07-28 one is met as a host meets any server: probe, then fall back.
  const version = env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  const stateless = isModernProtocolVersion(version);
  log(`scenario ${scenario || '(none)'} (protocol ${version ?? 'unnamed'}) against ${url}`);

  const authProvider = new OAuthProvider(authOptions(scenario, context, (line) => log(`auth: ${line}`)));
  const transport = new HttpTransport({ url, authProvider });
  const client = new McpClient(transport, {
    clientInfo: { name: 'mcp-host-conformance', version: '0.1.0' },
    handlers: conformanceHandlers(stateless),
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    protocol: stateless ? 'auto' : '2025-11-25',
  });
  client.onLog((entry) => {
    if (entry.level !== 'trace' && entry.level !== 'debug') log(`${entry.source}: ${entry.message}`);
  });
  try {
    const init = await client.connect();
    log(`connected to ${init.serverInfo?.name ?? 'a server'} (protocol ${init.protocolVersion})`);
    const results: unknown[] = [];
    if (client.serverCapabilities?.tools) {
      const tools = await client.listTools();
      const calls = plannedToolCalls(scenario, context, tools);
      for (const call of calls) {
        if (!tools.some((tool) => tool.name === call.name)) {
          log(`not calling ${call.name}: the host does not offer it`);
          continue;
        }
        try {
          const outcome = await client.callTool(call.name, call.arguments);
          results.push({ tool: call.name, result: outcome.result });
        } catch (error) {
          // A host shows a failed call and goes on; the scenario judges what was sent.
          const e = McpError.from(error);
          if (e.code === ErrorCode.ConnectionClosed) throw e;
          log(`tools/call ${call.name}: ${e.message}`);
          results.push({ tool: call.name, error: { code: e.code, message: e.message } });
        }
      }
    }
    out.write(`${JSON.stringify({ scenario, serverInfo: init.serverInfo, calls: results }, null, 2)}\n`);
    return 0;
  } catch (error) {
    err.write(`error: ${McpError.from(error).toString()}\n`);
    return 1;
  } finally {
    await client.close();
  }
}

function parseContext(text: string | undefined): Context {
  if (!text) return {};
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('expected an object');
  return value as Context;
}

/** The JSON Schema 2020-12 scenario: the schema of one tool, as the host holds it, is sent back through another. */
const SCHEMA_ECHO = {
  scenario: 'json-schema-2020-12-preservation',
  echoTool: 'json_schema_echo',
  schemaTool: 'json_schema_2020_12_tool',
} as const;

/**
 * The calls a person would make: those a scenario names (2026-07-28 header scenarios), else each
 * tool once with sample arguments; the schema scenario's echo tool gets the other tool's inputSchema
 * exactly as the host received and kept it, so the suite sees whatever the host dropped or changed.
 */
export function plannedToolCalls(
  scenario: string,
  context: Context,
  tools: readonly Tool[],
): Array<{ name: string; arguments: Record<string, unknown> }> {
  const named = toolCallsOf(context);
  if (named) return named;
  const echoed = scenario === SCHEMA_ECHO.scenario ? tools.find((tool) => tool.name === SCHEMA_ECHO.schemaTool)?.inputSchema : undefined;
  return tools.map((tool) => ({
    name: tool.name,
    arguments: echoed && tool.name === SCHEMA_ECHO.echoTool ? { schema: echoed } : sampleArguments(tool.inputSchema),
  }));
}

/** `toolCalls` of a scenario's context: the calls to make, in order. */
function toolCallsOf(context: Context): Array<{ name: string; arguments: Record<string, unknown> }> | undefined {
  const calls = context.toolCalls;
  if (!Array.isArray(calls)) return undefined;
  return calls
    .filter(
      (c): c is { name: string; arguments?: Record<string, unknown> } =>
        !!c && typeof c === 'object' && typeof (c as { name?: unknown }).name === 'string',
    )
    .map((c) => ({ name: c.name, arguments: c.arguments && typeof c.arguments === 'object' ? c.arguments : {} }));
}

function str(context: Context, key: string): string | undefined {
  const value = context[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Maps a scenario's context onto the settings a user would give the host for such a server. */
export function authOptions(scenario: string, context: Context, log: (line: string) => void): OAuthProviderOptions {
  const common = { clientName: 'mcp-host-conformance', log };
  const clientId = str(context, 'client_id');
  const clientSecret = str(context, 'client_secret');
  const privateKeyPem = str(context, 'private_key_pem');
  const idToken = str(context, 'idp_id_token');

  if (clientId && privateKeyPem) {
    return {
      ...common,
      grant: { type: 'client_credentials' },
      client: {
        clientId,
        tokenEndpointAuthMethod: 'private_key_jwt',
        privateKey: { pem: privateKeyPem, algorithm: str(context, 'signing_algorithm') ?? 'ES256' },
      },
    };
  }
  if (clientId && idToken) {
    const tokenEndpoint = str(context, 'idp_token_endpoint');
    if (!tokenEndpoint) throw new Error('the identity-assertion scenario gave no idp_token_endpoint');
    return {
      ...common,
      grant: {
        type: 'identity_assertion',
        identityProvider: { tokenEndpoint, issuer: str(context, 'idp_issuer'), clientId: str(context, 'idp_client_id'), idToken },
      },
      client: { clientId, clientSecret },
    };
  }
  if (clientId && scenario.startsWith('auth/client-credentials')) {
    return { ...common, grant: { type: 'client_credentials' }, client: { clientId, clientSecret } };
  }
  const userAgent = new HeadlessRedirectUserAgent();
  if (clientId) return { ...common, grant: { type: 'authorization_code', userAgent }, client: { clientId, clientSecret } };
  // Only the CIMD scenario is told this URL: no one serves a document there, and a suite that
  // checks a client's metadata document would otherwise try to fetch it from off this machine.
  return {
    ...common,
    grant: { type: 'authorization_code', userAgent },
    clientMetadataUrl: scenario === 'auth/basic-cimd' ? CONFORMANCE_CLIENT_METADATA_URL : undefined,
  };
}

/** A headless host: elicitation is accepted with the form's defaults, sampling gets a fixed answer; roots (none) only for 2026-07-28 scenarios, as 0.1.16's were scored without them. */
function conformanceHandlers(stateless: boolean): ClientHandlers {
  return {
    ...(stateless ? { listRoots: () => [] } : {}),
    elicit: async (params: ElicitRequestParams): Promise<ElicitResult> => ({
      action: 'accept',
      content: elicitationDefaults(params.requestedSchema),
    }),
    createMessage: async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'This is a canned answer from the conformance client.' },
      model: 'mcp-host-conformance',
      stopReason: 'endTurn',
    }),
  };
}

type PropertySchema = { type?: string; default?: unknown; enum?: unknown[] };

export function elicitationDefaults(schema: JsonSchemaObject | undefined): NonNullable<ElicitResult['content']> {
  const content: NonNullable<ElicitResult['content']> = {};
  for (const [name, raw] of Object.entries(schema?.properties ?? {})) {
    const value = (raw as PropertySchema).default;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') content[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) content[name] = value as string[];
  }
  return content;
}

/** Arguments that satisfy a simple input schema: each property's default, first enum value, or a plain value of its type. */
export function sampleArguments(schema: JsonSchemaObject | undefined): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(schema?.properties ?? {})) {
    const property = raw as PropertySchema;
    if (property.default !== undefined) args[name] = property.default;
    else if (Array.isArray(property.enum) && property.enum.length > 0) args[name] = property.enum[0];
    else args[name] = sampleOfType(property.type);
  }
  return args;
}

function sampleOfType(type: string | undefined): unknown {
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'test';
  }
}
