/**
 * JSON Schema of one `mcpHost.servers` entry. package.json contributes the same schema (a test
 * keeps the two equal), so settings.json gets IntelliSense and the core validates with ajv.
 */
const stringArray = { type: 'array', items: { type: 'string' } } as const;

const common = {
  enabled: { type: 'boolean', default: true, description: 'Set to false to keep this server defined but never started.' },
  autostart: { type: 'boolean', default: true, description: 'Start the server when the window opens or the definition changes.' },
  startupTimeoutMs: { type: 'integer', minimum: 1000, default: 30000, description: 'How long starting and the initialize handshake may take.' },
  requestTimeoutMs: { type: 'integer', minimum: 1000, default: 60000, description: 'Default timeout of each request to this server.' },
  tools: {
    type: 'object',
    description: 'Which tools are offered. Names or globs such as "read_*".',
    properties: {
      allow: { ...stringArray, description: 'When set, only these tools are offered.' },
      deny: { ...stringArray, description: 'These tools are never offered.' },
    },
    additionalProperties: false,
  },
  autoApprove: { ...stringArray, description: 'Tools that run without asking for confirmation.' },
  roots: { ...stringArray, description: 'Extra roots (folder paths or file:// URIs) given to this server besides the workspace folders.' },
  sampling: {
    type: 'object',
    description: "How this server may use the editor's language model (sampling/createMessage).",
    properties: {
      mode: { enum: ['ask', 'allow', 'deny'], default: 'ask', description: 'ask: ask each time (or remember "always"); allow: never ask; deny: always refuse.' },
      models: { ...stringArray, description: 'Model ids or families the server may use; empty or absent means any.' },
      maxTokensPerRequest: { type: 'integer', minimum: 1, description: 'Caps the maxTokens of each request.' },
      maxTokensPerHour: { type: 'integer', minimum: 1, description: "Token budget (input and output, counted by the model) per rolling hour." },
      maxRequestsPerMinute: { type: 'integer', minimum: 1, description: 'Refuses requests beyond this rate.' },
    },
    additionalProperties: false,
  },
} as const;

export const SERVER_ENTRY_SCHEMA = {
  type: 'object',
  oneOf: [
    {
      title: 'stdio server',
      required: ['command'],
      properties: {
        type: { const: 'stdio', description: 'A local process that speaks MCP over stdin/stdout.' },
        command: { type: 'string', minLength: 1, description: 'The program to run. Supports ${workspaceFolder}, ${userHome}, ${env:NAME} and ${input:ID}.' },
        args: { ...stringArray, description: 'Arguments passed to the command.' },
        env: {
          type: 'object',
          additionalProperties: { type: ['string', 'null'] },
          description: 'Environment variables set for the server (null removes one).',
        },
        envFile: { type: 'string', description: 'A .env file whose variables are set for the server.' },
        cwd: { type: 'string', description: 'The working directory. Defaults to the first workspace folder.' },
        ...common,
      },
      additionalProperties: false,
    },
    {
      title: 'HTTP server',
      required: ['type', 'url'],
      properties: {
        type: { const: 'http', description: 'A remote server reached over Streamable HTTP (or the older HTTP+SSE).' },
        url: { type: 'string', pattern: '^https?://', description: 'The server endpoint.' },
        headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Headers sent with every request.' },
        ...common,
      },
      additionalProperties: false,
    },
  ],
} as const;

export const SERVERS_SETTING_SCHEMA = {
  type: 'object',
  default: {},
  additionalProperties: SERVER_ENTRY_SCHEMA,
} as const;
