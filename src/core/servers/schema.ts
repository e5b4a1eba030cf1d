/**
 * JSON Schema of one `mcpHost.servers` entry. package.json contributes the same schema (a test
 * keeps the two equal), so settings.json gets IntelliSense and the core validates with ajv.
 * `markdownDescription` and `defaultSnippets` are VS Code's keywords; ajv (not strict) ignores them.
 */
const stringArray = { type: 'array', items: { type: 'string' } } as const;

const sandboxPaths = (what: string) => ({ ...stringArray, markdownDescription: what, examples: [['~/notes', './build']] });

/** VS Code's own `sandbox` object of `mcp.json`, per entry (VS Code puts it at the top of the file). */
const sandbox = {
  type: 'object',
  markdownDescription:
    'What the sandbox lets this server reach beyond its roots (see `sandboxEnabled`). Paths may start with `~/` or be relative to `cwd`.',
  properties: {
    filesystem: {
      type: 'object',
      markdownDescription: 'Files and folders beyond the roots: writable, hidden or read-only.',
      properties: {
        allowWrite: sandboxPaths('Folders or files the server may also read and write.'),
        denyRead: sandboxPaths('Paths hidden from the server, even inside its roots.'),
        denyWrite: sandboxPaths('Paths the server may read but never write, even inside its roots.'),
      },
      additionalProperties: false,
    },
    network: {
      type: 'object',
      markdownDescription:
        "What a sandboxed server may connect to. Without `allowedDomains` it has no network at all; with them, only those hosts, through MCP Host's filtering proxy (Linux also needs `socat`).",
      properties: {
        allowedDomains: {
          ...stringArray,
          markdownDescription:
            'Hosts the server may connect to, on any port: a name, an address, or `*.suffix` for every name below the suffix (not the suffix itself). A name only `*.suffix` allows may not lead to a loopback or private address.',
        },
        deniedDomains: {
          ...stringArray,
          markdownDescription:
            'Hosts (or `*.suffix`, or addresses) the server may never connect to, even where `allowedDomains` allows them.',
        },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

const VARIABLES = 'Strings may use `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and `${input:ID}`.';

const common = {
  enabled: {
    type: 'boolean',
    default: true,
    markdownDescription: 'Set to `false` to keep this server defined but never start it.',
  },
  autostart: {
    type: 'boolean',
    default: true,
    markdownDescription:
      'Start the server when the window opens or its definition changes. With `false` it starts only from **MCP Host: Start Server**.',
  },
  startupTimeoutMs: {
    type: 'integer',
    minimum: 1000,
    default: 30000,
    markdownDescription: 'How long, in milliseconds, starting the server and the `initialize` handshake may take.',
  },
  requestTimeoutMs: {
    type: 'integer',
    minimum: 1000,
    default: 60000,
    markdownDescription: 'Default timeout, in milliseconds, of each request to this server. Progress notifications do not extend it.',
  },
  tools: {
    type: 'object',
    markdownDescription: 'Which of the server\'s tools are offered. Names or globs such as `"read_*"`; `deny` wins over `allow`.',
    properties: {
      allow: { ...stringArray, markdownDescription: 'When set, only these tools are offered.', examples: [['read_*', 'search']] },
      deny: { ...stringArray, markdownDescription: 'These tools are never offered.', examples: [['write_*', 'delete_*']] },
    },
    additionalProperties: false,
  },
  autoApprove: {
    ...stringArray,
    markdownDescription:
      'Tool names (exact, not globs) that run without asking for confirmation. Other tools ask first, unless marked read-only by a server whose annotations are trusted (`trustAnnotations`).',
    examples: [['read_text_file', 'list_directory']],
  },
  roots: {
    ...stringArray,
    markdownDescription: 'Extra roots (folder paths or `file://` URIs) given to this server besides the workspace folders.',
    examples: [['${userHome}/notes']],
  },
  logLevel: {
    enum: ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'],
    default: 'info',
    markdownDescription:
      'The least severe log message the server should send (`logging/setLevel`, sent after it starts and whenever this changes, if the server declares `logging`). **MCP Host: Set Server Log Level...** writes it for you.',
  },
  protocol: {
    enum: ['auto', '2026-07-28', '2025-11-25'],
    default: 'auto',
    markdownEnumDescriptions: [
      'Ask the server (`server/discover`) and use `initialize` if it predates 2026-07-28. The answer is remembered until the definition changes.',
      'Only the stateless protocol of 2026-07-28: no `initialize`.',
      'Only the `initialize` handshake of 2025-11-25 (the server may settle on an older revision).',
    ],
    markdownDescription: 'Which MCP protocol era to speak with this server. `auto` finds out by itself.',
  },
  shareWithChat: {
    type: 'boolean',
    default: false,
    markdownDescription:
      "Offer this server to VS Code's chat (agent mode) through MCP Host's gateway, so every call the chat makes meets this server's policy: `tools.allow`/`tools.deny`, the roots fence, masking and the audit log. Needs VS Code 1.101 or newer. In workspace and folder settings the launch consent asks first.",
  },
  flowLabels: {
    type: 'object',
    additionalProperties: { type: 'array', items: { enum: ['untrusted', 'private', 'sink'] }, uniqueItems: true },
    markdownDescription:
      "The flow guard's labels of this server's tools (`mcpHost.flowGuard`), by tool name (`*` for the tools not named): exactly the labels the tool has. `untrusted`: its results may carry someone else's text (a web page, a public issue); `private`: its results are yours (notes, files, mail); `sink`: it writes or sends. Unnamed tools are labelled from their annotations when `trustAnnotations` is on, else as all three. `resources/read` labels every resource read of the server (else `private`), `prompts/get` every prompt got (else none).",
    examples: [{ search_issues: ['untrusted'], read_note: ['private'], send_message: ['sink'], '*': [] }],
  },
  trustAnnotations: {
    type: 'boolean',
    markdownDescription:
      "Whether the server's `readOnlyHint` may skip the confirmation before a tool runs. Annotations are the server's own claim: the default is `true` in user settings and `false` in workspace and folder settings.",
  },
  sampling: {
    type: 'object',
    markdownDescription: "How this server may use the editor's language model (`sampling/createMessage`).",
    properties: {
      mode: {
        enum: ['ask', 'allow', 'deny'],
        default: 'ask',
        markdownEnumDescriptions: [
          'Ask each time (**Always Allow for This Server** remembers the answer).',
          'Never ask. Budgets and the model list still apply.',
          'Refuse every request.',
        ],
        markdownDescription: 'Whether a sampling request needs your consent.',
      },
      models: {
        ...stringArray,
        markdownDescription: 'Model ids or families the server may use; empty or absent means any.',
        examples: [['gpt-4o', 'claude-sonnet-4']],
      },
      maxTokensPerRequest: { type: 'integer', minimum: 1, markdownDescription: 'Caps the `maxTokens` of each request.' },
      maxTokensPerHour: {
        type: 'integer',
        minimum: 1,
        markdownDescription: 'Token budget (input and output, counted by the model) per rolling hour.',
      },
      maxRequestsPerMinute: { type: 'integer', minimum: 1, markdownDescription: 'Refuses requests beyond this rate.' },
    },
    additionalProperties: false,
  },
} as const;

export const SERVER_ENTRY_SCHEMA = {
  type: 'object',
  markdownDescription: `One MCP server. Give \`command\` for a local (stdio) server, or \`"type": "http"\` and \`url\` for a remote one. ${VARIABLES}`,
  defaultSnippets: [
    {
      label: 'stdio server',
      description: 'A local program that speaks MCP over stdin/stdout',
      body: { command: '${1:node}', args: ['${2:server.js}'] },
    },
    {
      label: 'npm package server (npx)',
      description: 'An MCP server published on npm, run with npx',
      body: { command: 'npx', args: ['-y', '${1:@modelcontextprotocol/server-everything}'] },
    },
    {
      label: 'HTTP server',
      description: 'A remote server reached over Streamable HTTP',
      body: { type: 'http', url: '${1:https://example.com/mcp}' },
    },
  ],
  oneOf: [
    {
      title: 'stdio server',
      required: ['command'],
      properties: {
        type: {
          const: 'stdio',
          markdownDescription: 'A local process that speaks MCP over stdin/stdout. The default when `command` is given.',
        },
        command: {
          type: 'string',
          minLength: 1,
          markdownDescription: `The program to run, found on \`PATH\` or given as a path. ${VARIABLES}`,
          examples: ['npx', 'node', 'uvx', '${workspaceFolder}/bin/server'],
        },
        args: {
          ...stringArray,
          markdownDescription: 'Arguments passed to the command, one string each (no shell quoting).',
          examples: [['-y', '@modelcontextprotocol/server-filesystem', '${workspaceFolder}']],
        },
        env: {
          type: 'object',
          additionalProperties: { type: ['string', 'null'] },
          markdownDescription:
            "Environment variables set for the server, on top of a small base of the editor's (`PATH`, `HOME`, `USER`, `SHELL`, `TERM`, `LANG`, `LC_*`, `TMPDIR`; never VS Code's own). `null` removes one. Use `${input:ID}` for a secret and `${env:NAME}` to pass one of the editor's on.",
          examples: [{ LOG_LEVEL: 'info', API_KEY: '${input:api-key}' }],
        },
        envFile: {
          type: 'string',
          markdownDescription: 'A `.env` file whose variables are set for the server (`env` wins).',
          examples: ['${workspaceFolder}/.env'],
        },
        cwd: {
          type: 'string',
          markdownDescription: 'The working directory. Defaults to the first workspace folder.',
          examples: ['${workspaceFolder}'],
        },
        sandboxEnabled: {
          type: 'boolean',
          default: false,
          markdownDescription:
            'Run the server in an operating-system sandbox (Linux: bubblewrap; macOS: sandbox-exec) whose boundary is its roots: it reads and writes them, reads the system and its own installation, sees an empty home and a private `/tmp`, and has no network. Where the machine has no sandbox the server does not start. Widened by `sandbox`.',
        },
        sandbox,
        ...common,
      },
      additionalProperties: false,
    },
    {
      title: 'HTTP server',
      required: ['type', 'url'],
      properties: {
        type: {
          const: 'http',
          markdownDescription: 'A remote server reached over Streamable HTTP (or the older HTTP+SSE, detected from the URL).',
        },
        url: {
          type: 'string',
          pattern: '^https?://',
          markdownDescription: 'The server endpoint. OAuth sign-in starts by itself when the server asks for it.',
          examples: ['https://example.com/mcp'],
        },
        headers: {
          type: 'object',
          additionalProperties: { type: 'string' },
          markdownDescription: 'Headers sent with every request. Use `${input:ID}` for a token.',
          examples: [{ Authorization: 'Bearer ${input:api-token}' }],
        },
        ...common,
      },
      additionalProperties: false,
    },
  ],
} as const;

export const SERVERS_SETTING_SCHEMA = {
  type: 'object',
  default: {},
  markdownDescription:
    'MCP servers to run, keyed by name. A stdio server runs a `command` with `args`, `env`, `envFile` and `cwd`; an HTTP server has `"type": "http"`, a `url` and `headers`. ' +
    `${VARIABLES} An \`\${input:ID}\` value is asked once and kept in the secret storage. **MCP Host: Add Server...** and **MCP Host: Import Servers...** write this setting for you.`,
  defaultSnippets: [
    {
      label: 'stdio server',
      description: 'A local program that speaks MCP over stdin/stdout',
      body: { '${1:name}': { command: '${2:node}', args: ['${3:server.js}'] } },
    },
    {
      label: 'npm package server (npx)',
      description: 'An MCP server published on npm, run with npx',
      body: { '${1:everything}': { command: 'npx', args: ['-y', '${2:@modelcontextprotocol/server-everything}'] } },
    },
    {
      label: 'HTTP server',
      description: 'A remote server reached over Streamable HTTP',
      body: { '${1:remote}': { type: 'http', url: '${2:https://example.com/mcp}' } },
    },
  ],
  examples: [
    {
      everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
      remote: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${input:remote-token}' } },
    },
  ],
  additionalProperties: SERVER_ENTRY_SCHEMA,
} as const;

/**
 * `mcpHost.inputs`: how to ask for an `${input:ID}` value (VS Code's `promptString` inputs, keyed
 * by id so user and workspace settings merge). The values themselves live in the secret storage.
 */
export const INPUTS_SETTING_SCHEMA = {
  type: 'object',
  default: {},
  markdownDescription:
    "How MCP Host asks for each `${input:ID}` used in `mcpHost.servers`, keyed by the ID. The value typed is kept in the secret storage, never in settings. **MCP Host: Import Servers...** fills this from the `inputs` of VS Code's `mcp.json`.",
  examples: [{ 'github-token': { description: 'GitHub personal access token', password: true } }],
  additionalProperties: {
    type: 'object',
    properties: {
      description: { type: 'string', markdownDescription: 'The prompt shown when the value is asked for.' },
      password: { type: 'boolean', default: true, markdownDescription: 'Hide what is typed.' },
      default: { type: 'string', markdownDescription: 'The value the input box starts with.' },
    },
    additionalProperties: false,
  },
} as const;

/** One `mcpHost.inputs` entry, as the schema above describes it. */
export interface InputDefinition {
  description?: string;
  password?: boolean;
  default?: string;
}
