import type { Implementation, ServerCapabilities } from '../protocol/types';
import { inline, quoted } from './serverText';

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

/**
 * The "Show Server Info" document: who the server says it is, what it offers, and its instructions
 * in full. Everything the server sent is data (serverText.ts): escaped inline, the instructions a
 * quoted code block, no link in it acts.
 */
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
  const lines = [`# ${inline(info.name)}`, '', `${inline(info.reachedBy, 2000)} · ${info.scope} · ${inline(info.state)}`, ''];
  if (!info.serverInfo) return [...lines, l.notRunning, ''].join('\n');
  const s = info.serverInfo;
  lines.push(`- **${l.server}:** ${s.title && s.title !== s.name ? `${inline(s.title)} (${inline(s.name)})` : inline(s.name)}`);
  lines.push(`- **${l.version}:** ${inline(String(s.version))}`);
  if (info.protocolVersion) lines.push(`- **${l.protocol}:** ${inline(info.protocolVersion)}`);
  if (s.description) lines.push('', quoted(s.description));
  lines.push('', `## ${l.capabilities}`, '');
  const caps = Object.entries(info.capabilities ?? {}).filter(([, v]) => v !== undefined);
  if (!caps.length) lines.push(l.none);
  for (const [key, value] of caps) {
    const flags =
      value && typeof value === 'object'
        ? Object.entries(value as Record<string, unknown>)
            .filter(([, v]) => v === true)
            .map(([k]) => k)
        : [];
    lines.push(`- ${inline(key)}${flags.length ? ` (${flags.map((f) => inline(f)).join(', ')})` : ''}`);
  }
  lines.push('', `## ${l.instructions}`, '', info.instructions?.trim() ? quoted(info.instructions.trim(), 'markdown') : l.none, '');
  return lines.join('\n');
}
