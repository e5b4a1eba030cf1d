/**
 * What of a server's lists and results the chat may see: only the tools the person's policy
 * offers to a person (allow/deny, visibility), `readOnlyHint` only where the person trusts the
 * server's annotations (VS Code asks before every other tool), and results with secrets masked and
 * links that would act in the editor made plain text, before they reach the chat's model.
 */
import { isToolForPerson } from '../apps/toolUi';
import type { ServerDefinition } from '../servers/definition';
import { isToolOffered } from '../policy/offered';
import type { CallToolResult, ContentBlock, GetPromptResult, ReadResourceResult, Tool } from '../protocol/types';
import type { Masker } from '../policy/types';
import { McpError } from '../protocol/errors';
import type { PinStatus } from '../policy/pins';

type ChatPolicy = Pick<ServerDefinition, 'tools' | 'trustAnnotations'>;

/**
 * The tools the chat is offered, as the chat should see them. With pins (`pinOf`), a tool whose
 * definition changed since the person approved it is not offered at all until they accept it, and
 * one never pinned is offered without its read-only hint (VS Code asks before calling it).
 */
export function toolsForChat(tools: readonly Tool[], policy: ChatPolicy, pinOf?: (tool: Tool) => PinStatus | undefined): Tool[] {
  return tools
    .filter((t) => isToolOffered(policy as ServerDefinition, t.name) && isToolForPerson(t))
    .flatMap((t) => {
      const pin = pinOf?.(t);
      return pin?.status === 'changed'
        ? []
        : [{ tool: t, trusted: policy.trustAnnotations && (pin === undefined || pin.status === 'same') }];
    })
    .map(({ tool: t, trusted }) => {
      if (trusted || t.annotations?.readOnlyHint === undefined) return t;
      const { readOnlyHint: _untrusted, ...annotations } = t.annotations;
      return { ...t, annotations };
    });
}

/** URI schemes that run something when a link is followed in the editor: never a link the chat may render. */
const ACTING_SCHEME = /^\s*(command|vscode|vscode-insiders|vscode-webview|javascript|vbscript|data)\s*:/i;

/** Whether a resource URI a server hands the chat would act in the editor when opened. */
export function isActingUri(uri: string): boolean {
  return ACTING_SCHEME.test(uri);
}

/**
 * A content block as the chat's model reads it: every string masked (text, URIs, names, `_meta`,
 * fields of later revisions), a text-typed blob masked in its decoded text; media bytes kept.
 */
function maskBlock(block: ContentBlock, masker: Masker): ContentBlock {
  const mask = (text: string): string => masker.maskText(text).text;
  switch (block.type) {
    case 'resource_link':
      // A link to `command:` or `vscode:` would be one click from running something: the chat gets its text only.
      if (isActingUri(block.uri)) return { type: 'text', text: mask(`[link removed by MCP Host: ${block.name} <${block.uri}>]`) };
      return masker.maskValue(block).value;
    case 'resource': {
      const { resource } = block;
      if (isActingUri(resource.uri)) return { type: 'text', text: mask(`[resource removed by MCP Host: <${resource.uri}>]`) };
      return { ...masker.maskValue({ ...block, resource: undefined }).value, resource: maskContents(resource, masker) };
    }
    case 'image':
    case 'audio':
      return { ...masker.maskValue({ ...block, data: '' }).value, data: block.data };
    default:
      // Text, and a block of a later revision: every string in it masked.
      return masker.maskValue(block as ContentBlock).value;
  }
}

type Contents = ReadResourceResult['contents'][number];

/** A resource's contents: every string masked; a blob whose type says it is text, masked in its decoded text. */
function maskContents<C extends Contents>(contents: C, masker: Masker): C {
  if (!('blob' in contents) || typeof contents.blob !== 'string') return masker.maskValue(contents).value;
  const { blob, ...rest } = contents;
  return { ...masker.maskValue(rest).value, blob: maskBlob(blob, contents.mimeType, masker) } as C;
}

/** Media types whose bytes are text a model would read (and a key file is text too). */
const TEXT_TYPE =
  /^text\/|[/+.-](?:json|xml|yaml|toml|csv|javascript|ecmascript|sql|graphql|x-sh|x-shellscript|pem-file|pgp-keys|x-www-form-urlencoded)\b/i;

/**
 * A base64 blob masked in its text reading when its media type is text (or it has none and its
 * bytes are UTF-8): decoded, masked, encoded again; anything else (images, audio, archives) is kept.
 */
function maskBlob(blob: string, mimeType: string | undefined, masker: Masker): string {
  if (mimeType !== undefined && !TEXT_TYPE.test(mimeType)) return blob;
  const bytes = Buffer.from(blob, 'base64');
  let text: string;
  let encoding: 'utf8' | 'latin1' = 'utf8';
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    if (mimeType === undefined) return blob;
    // Text in another encoding: every byte read as one character, so the bytes around a secret come back as they were.
    text = bytes.toString('latin1');
    encoding = 'latin1';
  }
  const masked = masker.maskText(text).text;
  return masked === text ? blob : Buffer.from(masked, encoding).toString('base64');
}

/**
 * Items whose texts the model reads one after another (adjacent text blocks, text contents,
 * messages): each run of them masked as one text, so a secret split between two is still masked.
 */
function maskRuns<T>(
  items: readonly T[],
  textOf: (item: T) => string | undefined,
  withText: (item: T, text: string) => T,
  masker: Masker,
): T[] {
  const out = [...items];
  for (let i = 0; i < out.length;) {
    let j = i;
    while (j < out.length && textOf(out[j]) !== undefined) j++;
    if (j - i > 1) {
      const { parts } = masker.maskParts(out.slice(i, j).map((item) => textOf(item)!));
      for (let k = i; k < j; k++) out[k] = withText(out[k], parts[k - i]);
    }
    i = Math.max(j, i + 1);
  }
  return out;
}

const blockText = (b: ContentBlock): string | undefined => (b.type === 'text' ? b.text : undefined);
const withBlockText = (b: ContentBlock, text: string): ContentBlock => ({ ...b, text }) as ContentBlock;

function maskBlocks(blocks: readonly ContentBlock[], masker: Masker): ContentBlock[] {
  return maskRuns(
    blocks.map((b) => maskBlock(b, masker)),
    blockText,
    withBlockText,
    masker,
  );
}

/** A tool result as it goes to the chat: every string masked (`_meta` and fields we do not know included), acting links made plain text. */
export function resultForChat(result: CallToolResult, masker: Masker): CallToolResult {
  const { content, structuredContent, ...rest } = result;
  const out: CallToolResult = { ...masker.maskValue(rest).value, content: maskBlocks(content ?? [], masker) };
  if (structuredContent !== undefined) out.structuredContent = masker.maskValue(structuredContent).value;
  return out;
}

export function readForChat(result: ReadResourceResult, masker: Masker): ReadResourceResult {
  const { contents, ...rest } = result;
  return {
    ...masker.maskValue(rest).value,
    contents: maskRuns(
      contents.map((c) => maskContents(c, masker)),
      (c) => ('text' in c && typeof c.text === 'string' ? c.text : undefined),
      (c, text) => ({ ...c, text }),
      masker,
    ),
  };
}

export function promptForChat(result: GetPromptResult, masker: Masker): GetPromptResult {
  const { messages, ...rest } = result;
  return {
    ...masker.maskValue(rest).value,
    messages: maskRuns(
      messages.map((m) => ({ ...masker.maskValue({ ...m, content: undefined }).value, content: maskBlock(m.content, masker) })),
      (m) => blockText(m.content),
      (m, text) => ({ ...m, content: withBlockText(m.content, text) }),
      masker,
    ),
  };
}

/**
 * A list the chat reads (tools, prompts, resources, templates): every string masked, a resource's
 * URI included (a URI with a password in it is not readable by the chat, by design); the names
 * the chat calls things by are kept.
 */
export function listForChat<T extends { name: string }>(items: readonly T[], masker: Masker): T[] {
  return items.map((item) => ({ ...masker.maskValue(item).value, name: item.name }));
}

/** An error on its way to the chat: its message (a server's error may echo what it read) and data masked; code and kind kept. */
export function errorForChat(error: unknown, masker: Masker): McpError {
  const e = McpError.from(error);
  const message = masker.maskText(e.message).text;
  const data = e.data === undefined ? undefined : masker.maskValue(e.data).value;
  return message === e.message && data === e.data ? e : new McpError(e.code, message, data, e.kind);
}

/** A refusal as a tool result the chat's model can read and act on. */
export function refusedResult(server: string, tool: string, reason: string): CallToolResult {
  return { content: [{ type: 'text', text: `MCP Host refused ${server} › ${tool}: ${reason}.` }], isError: true };
}

/** The text a model reads of content blocks: text blocks and embedded text resources. */
function blocksText(blocks: readonly ContentBlock[]): string[] {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'resource' && 'text' in block.resource && typeof block.resource.text === 'string')
      parts.push(block.resource.text);
  }
  return parts;
}

/** The text a model reads of a tool result: its text blocks, embedded text resources and structured content. */
export function resultText(result: CallToolResult): string {
  const parts = blocksText(result.content ?? []);
  if (result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

/** The text a model reads of a resource read: its text contents. */
export function readText(result: ReadResourceResult): string {
  return result.contents.flatMap((c) => ('text' in c && typeof c.text === 'string' ? [c.text] : [])).join('\n');
}

/** The text a model reads of a prompt: its messages' text blocks and embedded text resources. */
export function promptText(result: GetPromptResult): string {
  return blocksText(result.messages.map((m) => m.content)).join('\n');
}
