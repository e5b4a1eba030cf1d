/**
 * The scan's findings as a SARIF 2.1.0 log, for CI code scanning (GitHub's, and any other reader
 * of the OASIS format): one rule per detector, one result per finding, located in the
 * configuration file that defines the server when there is one (the line of its entry), and
 * always by its logical place: `server/tools/name` and the JSON pointer inside the definition.
 */
import { DETECTORS, type Detector, type ScanFinding } from './detectors';

export interface ScannedServer {
  name: string;
  findings: readonly ScanFinding[];
  /** The file that defines the server, relative to where CI checks out the repository, and the line of its entry. */
  definedIn?: { uri: string; line: number };
  /** Why it could not be scanned (it did not start, it failed to list). */
  error?: string;
}

const RULES = Object.keys(DETECTORS) as Detector[];

const KIND_FOLDER = { tool: 'tools', prompt: 'prompts', instructions: 'instructions' } as const;

/** The finding's place as a name: `notes/tools/read_note/description`. */
function logicalName(server: string, f: ScanFinding): string {
  return f.kind === 'instructions' ? `${server}/instructions` : `${server}/${KIND_FOLDER[f.kind]}/${f.name}${f.pointer}`;
}

export function sarifLog(servers: readonly ScannedServer[], version: string): Record<string, unknown> {
  const results = servers.flatMap((server) => [
    ...server.findings.map((f) => ({
      ruleId: f.detector,
      ruleIndex: RULES.indexOf(f.detector),
      level: 'error',
      message: {
        text: `${f.kind === 'instructions' ? 'The instructions' : `The ${f.kind} ${f.name}`} of the MCP server ${server.name}: ${DETECTORS[f.detector]}. Found at ${f.pointer || '(the text)'}: ${f.text}`,
      },
      locations: [location(server, logicalName(server.name, f))],
      partialFingerprints: { mcpFinding: `${server.name}|${f.kind}|${f.name}|${f.pointer}|${f.detector}` },
    })),
    ...(server.error === undefined
      ? []
      : [
          {
            ruleId: 'scan-failed',
            level: 'warning',
            message: { text: `The MCP server ${server.name} could not be scanned: ${server.error}` },
            locations: [location(server, server.name)],
          },
        ]),
  ]);
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'mcp-host scan',
            informationUri: 'https://github.com/mcp-host/mcp-host/blob/main/docs/injection.md',
            version,
            rules: RULES.map((id) => ({
              id,
              name: id,
              shortDescription: { text: DETECTORS[id] },
              defaultConfiguration: { level: 'error' },
            })),
          },
        },
        results,
      },
    ],
  };
}

function location(server: ScannedServer, name: string): Record<string, unknown> {
  return {
    ...(server.definedIn && {
      physicalLocation: { artifactLocation: { uri: server.definedIn.uri }, region: { startLine: server.definedIn.line } },
    }),
    logicalLocations: [{ fullyQualifiedName: name, kind: 'member' }],
  };
}
