import type { CallToolResult, ContentBlock, GetPromptResult } from '../protocol/types';
import type { SchemaCheck } from '../schema/validator';

/** A binary block that opens as its own document (an image preview, an audio file), stored beside the Markdown that links it. */
export interface Attachment {
  fileName: string;
  mimeType: string;
  data: Buffer;
}

export interface Rendered {
  markdown: string;
  attachments: Attachment[];
}

/** Resource links become links the host can open; the host supplies how. */
export type ResourceLinker = (uri: string, name: string, mimeType?: string) => string;

const FENCE = '````';
const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp', 'image/svg+xml': 'svg', 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/ogg': 'ogg' };

function fileNameFor(base: string, mimeType: string, n: number): string {
  return `${base}-${n}.${EXT[mimeType] ?? 'bin'}`;
}

/**
 * Binary content is not inlined (base64 would bury the text); it is stored beside the document
 * and linked relatively, so a click opens it in the image preview or the audio player.
 */
function attachmentLink(icon: string, fileName: string, mimeType: string, size: number): string {
  return `${icon} [${fileName}](${fileName}) — ${mimeType}, ${size} bytes`;
}

function renderBlock(block: ContentBlock, out: Rendered, base: string, link: ResourceLinker): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio': {
      const fileName = fileNameFor(base, block.mimeType, out.attachments.length + 1);
      out.attachments.push({ fileName, mimeType: block.mimeType, data: Buffer.from(block.data, 'base64') });
      return attachmentLink(block.type === 'image' ? '🖼' : '🔊', fileName, block.mimeType, Buffer.byteLength(block.data, 'base64'));
    }
    case 'resource_link':
      return `🔗 ${link(block.uri, block.name, block.mimeType)}${block.description ? ` — ${block.description}` : ''}`;
    case 'resource': {
      const r = block.resource;
      const head = `📎 Embedded resource ${link(r.uri, r.uri, r.mimeType)}${r.mimeType ? ` (${r.mimeType})` : ''}`;
      if ('text' in r) return `${head}\n\n${FENCE}\n${r.text}\n${FENCE}`;
      const mime = r.mimeType ?? 'application/octet-stream';
      const fileName = fileNameFor(base, mime, out.attachments.length + 1);
      out.attachments.push({ fileName, mimeType: mime, data: Buffer.from(r.blob, 'base64') });
      return `${head}\n\n${attachmentLink('📄', fileName, mime, Buffer.byteLength(r.blob, 'base64'))}`;
    }
    default:
      return `${FENCE}json\n${JSON.stringify(block, null, 2)}\n${FENCE}`;
  }
}

/** A tool result as Markdown, every block in order, structured content with its check. */
export function renderToolResult(
  title: string,
  args: Record<string, unknown>,
  result: CallToolResult,
  check: SchemaCheck | undefined,
  link: ResourceLinker,
): Rendered {
  const out: Rendered = { markdown: '', attachments: [] };
  const parts = [`# ${title}${result.isError ? ' — failed' : ''}`, `Arguments:\n\n${FENCE}json\n${JSON.stringify(args, null, 2)}\n${FENCE}`];
  parts.push(result.isError ? '## Error reported by the tool' : '## Result');
  if (result.content.length === 0) parts.push('_(no content)_');
  for (const block of result.content) parts.push(renderBlock(block, out, 'content', link));
  if (result.structuredContent !== undefined) {
    const verdict = !check ? '' : check.ok ? ' — matches the outputSchema ✓' : ` — does NOT match the outputSchema: ${check.message}`;
    parts.push(`## Structured content${verdict}`, `${FENCE}json\n${JSON.stringify(result.structuredContent, null, 2)}\n${FENCE}`);
  } else if (check && !check.ok) {
    parts.push(`## Structured content\n\n⚠️ ${check.message}`);
  }
  out.markdown = `${parts.join('\n\n')}\n`;
  return out;
}

/** A rendered prompt as Markdown: one heading per message. */
export function renderPrompt(name: string, args: Record<string, string>, result: GetPromptResult, link: ResourceLinker): Rendered {
  const out: Rendered = { markdown: '', attachments: [] };
  const parts = [`# Prompt: ${name}`];
  if (result.description) parts.push(`_${result.description}_`);
  if (Object.keys(args).length) parts.push(`Arguments: ${Object.entries(args).map(([k, v]) => `\`${k}\` = ${JSON.stringify(v)}`).join(', ')}`);
  result.messages.forEach((m, i) => parts.push(`## ${i + 1}. ${m.role}`, renderBlock(m.content, out, `message-${i + 1}`, link)));
  out.markdown = `${parts.join('\n\n')}\n`;
  return out;
}

/** The plain text of a prompt's messages, for the clipboard. */
export function promptText(result: GetPromptResult): string {
  return result.messages
    .map((m) => {
      const c = m.content;
      const text = c.type === 'text' ? c.text : c.type === 'resource' && 'text' in c.resource ? c.resource.text : `[${c.type}]`;
      return `${m.role}: ${text}`;
    })
    .join('\n\n');
}
