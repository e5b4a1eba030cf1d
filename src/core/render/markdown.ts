import type { CallToolResult, ContentBlock, GetPromptResult } from '../protocol/types';
import type { SchemaCheck } from '../schema/validator';
import { fenced, inline, linkTo, quoted } from './serverText';

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

/** Resource links become links the host can open: the host supplies the target URI of our own scheme. */
export type ResourceLinker = (uri: string, name: string, mimeType?: string) => string;

/**
 * Attachment names are ours, and only images and audio get an extension that opens a preview;
 * SVG (which can carry scripts) opens as XML text.
 */
const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg.xml',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
};

function fileNameFor(base: string, mimeType: string, n: number): string {
  return `${base}-${n}.${EXT[mimeType.split(';')[0].trim().toLowerCase()] ?? 'bin'}`;
}

/**
 * Binary content is not inlined (base64 would bury the text); it is stored beside the document
 * and linked relatively, so a click opens it in the image preview or the audio player.
 */
function attachmentLink(icon: string, fileName: string, mimeType: string, size: number): string {
  return `${icon} [${fileName}](${fileName}) — ${inline(mimeType, 100)}, ${size} bytes`;
}

function renderBlock(block: ContentBlock, out: Rendered, base: string, link: ResourceLinker): string {
  switch (block.type) {
    case 'text':
      return quoted(block.text);
    case 'image':
    case 'audio': {
      const fileName = fileNameFor(base, block.mimeType, out.attachments.length + 1);
      out.attachments.push({ fileName, mimeType: block.mimeType, data: Buffer.from(block.data, 'base64') });
      return attachmentLink(block.type === 'image' ? '🖼' : '🔊', fileName, block.mimeType, Buffer.byteLength(block.data, 'base64'));
    }
    case 'resource_link':
      return `🔗 ${linkTo(block.name, link(block.uri, block.name, block.mimeType))}${block.description ? ` — ${inline(block.description)}` : ''}`;
    case 'resource': {
      const r = block.resource;
      const head = `📎 Embedded resource ${linkTo(r.uri, link(r.uri, r.uri, r.mimeType))}${r.mimeType ? ` (${inline(r.mimeType, 100)})` : ''}`;
      if ('text' in r) return `${head}\n\n${quoted(r.text)}`;
      const mime = r.mimeType ?? 'application/octet-stream';
      const fileName = fileNameFor(base, mime, out.attachments.length + 1);
      out.attachments.push({ fileName, mimeType: mime, data: Buffer.from(r.blob, 'base64') });
      return `${head}\n\n${attachmentLink('📄', fileName, mime, Buffer.byteLength(r.blob, 'base64'))}`;
    }
    default:
      return quoted(JSON.stringify(block, null, 2), 'json');
  }
}

/**
 * A tool result as Markdown, every block in order, structured content with its check. Every line
 * the server wrote starts with `>` (see `quoted`); the lines that don't are ours.
 */
export function renderToolResult(
  title: string,
  args: Record<string, unknown>,
  result: CallToolResult,
  check: SchemaCheck | undefined,
  link: ResourceLinker,
): Rendered {
  const out: Rendered = { markdown: '', attachments: [] };
  const parts = [
    `# ${inline(title)}${result.isError ? ' — failed' : ''}`,
    `Arguments:\n\n${fenced(JSON.stringify(args, null, 2), 'json')}`,
  ];
  parts.push(result.isError ? '## Error reported by the tool' : '## Result');
  if (result.content.length === 0) parts.push('_(no content)_');
  for (const block of result.content) parts.push(renderBlock(block, out, 'content', link));
  if (result.structuredContent !== undefined) {
    const verdict = !check
      ? ''
      : check.ok
        ? ' — matches the outputSchema ✓'
        : ` — does NOT match the outputSchema: ${inline(check.message)}`;
    parts.push(`## Structured content${verdict}`, quoted(JSON.stringify(result.structuredContent, null, 2), 'json'));
  } else if (check && !check.ok) {
    parts.push(`## Structured content\n\n⚠️ ${inline(check.message)}`);
  }
  out.markdown = `${parts.join('\n\n')}\n`;
  return out;
}

/** A rendered prompt as Markdown: one heading per message. */
export function renderPrompt(name: string, args: Record<string, string>, result: GetPromptResult, link: ResourceLinker): Rendered {
  const out: Rendered = { markdown: '', attachments: [] };
  const parts = [`# Prompt: ${inline(name)}`];
  if (result.description) parts.push(quoted(result.description));
  if (Object.keys(args).length)
    parts.push(
      `Arguments: ${Object.entries(args)
        .map(([k, v]) => `${inline(k, 100)} = ${inline(JSON.stringify(v))}`)
        .join(', ')}`,
    );
  result.messages.forEach((m, i) =>
    parts.push(`## ${i + 1}. ${inline(String(m.role), 40)}`, renderBlock(m.content, out, `message-${i + 1}`, link)),
  );
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
