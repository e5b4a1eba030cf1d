import type { Implementation, ServerCapabilities } from '../protocol/types';

export interface ServerInfoInput {
  name: string;
  /** "stdio: node server.js" or the URL. */
  reachedBy: string;
  /** Where the definition lives, as the person reads it ("user settings"). */
  scope: string;
  state: string;
  serverInfo?: Implementation;
  protocolVersion?: string;
  capabilities?: ServerCapabilities;
  instructions?: string;
  /** Translated headings; English by default. */
  labels?: Partial<Record<'server' | 'version' | 'protocol' | 'capabilities' | 'instructions' | 'none' | 'notRunning', string>>;
}

/** The "Show Server Info" document: who the server says it is, what it offers, and its instructions in full. */
export function renderServerInfo(info: ServerInfoInput): string {
  const l = {
    server: 'Server',
    version: 'Version',
    protocol: 'Protocol',
    capabilities: 'Capabilities',
    instructions: 'Instructions',
    none: '(none)',
    notRunning: 'The server is not running: start it to see what it reports.',
    ...info.labels,
  };
  const lines = [`# ${info.name}`, '', `${info.reachedBy} · ${info.scope} · ${info.state}`, ''];
  if (!info.serverInfo) return [...lines, l.notRunning, ''].join('\n');
  const s = info.serverInfo;
  lines.push(`- **${l.server}:** ${s.title && s.title !== s.name ? `${s.title} (\`${s.name}\`)` : `\`${s.name}\``}`);
  lines.push(`- **${l.version}:** ${s.version}`);
  if (info.protocolVersion) lines.push(`- **${l.protocol}:** ${info.protocolVersion}`);
  if (s.description) lines.push('', s.description);
  lines.push('', `## ${l.capabilities}`, '');
  const caps = Object.entries(info.capabilities ?? {}).filter(([, v]) => v !== undefined);
  if (!caps.length) lines.push(l.none);
  for (const [key, value] of caps) {
    const flags = value && typeof value === 'object' ? Object.entries(value as Record<string, unknown>).filter(([, v]) => v === true).map(([k]) => k) : [];
    lines.push(`- \`${key}\`${flags.length ? ` (${flags.join(', ')})` : ''}`);
  }
  lines.push('', `## ${l.instructions}`, '', info.instructions?.trim() ? info.instructions.trim() : l.none, '');
  return lines.join('\n');
}
