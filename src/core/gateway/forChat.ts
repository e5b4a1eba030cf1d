/**
 * What of a server's lists and results the chat may see: only the tools the person's policy
 * offers to a person (allow/deny, visibility), `readOnlyHint` only where the person trusts the
 * server's annotations (VS Code asks before every other tool), and results with secrets masked and
 * links that would act in the editor made plain text, before they reach the chat's model.
 */
import { isToolForPerson } from '../apps/toolUi';
import type { ServerDefinition } from '../servers/definition';
import { isToolOffered } from '../servers/launch';
import type { CallToolResult, ContentBlock, GetPromptResult, ReadResourceResult, Tool } from '../protocol/types';
import type { Masker } from '../policy/types';
import type { PinStatus } from '../policy/pins';

type ChatPolicy = Pick<ServerDefinition, 'tools' | 'trustAnnotations'>;

/**
 * The tools the chat is offered, as the chat should see them. With pins (`pinOf`), a tool whose
 * definition changed since the person approved it is not offered at all until they accept it, and
 * one never pinned is offered without its read-only hint (VS Code asks before calling it).
 */
export function toolsForChat(tools: readonly Tool[], policy: ChatPolicy, pinOf?: (tool: Tool) => PinStatus): Tool[] {
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

function maskBlock(block: ContentBlock, masker: Masker): ContentBlock {
  const mask = (text: string): string => masker.maskText(text).text;
  switch (block.type) {
    case 'text':
      return { ...block, text: mask(block.text) };
    case 'resource_link':
      // A link to `command:` or `vscode:` would be one click from running something: the chat gets its text only.
      if (isActingUri(block.uri)) return { type: 'text', text: mask(`[link removed by MCP Host: ${block.name} <${block.uri}>]`) };
      return masker.maskValue(block).value;
    case 'resource': {
      const { resource } = block;
      if (isActingUri(resource.uri)) return { type: 'text', text: mask(`[resource removed by MCP Host: <${resource.uri}>]`) };
      return 'text' in resource ? { ...block, resource: { ...resource, text: mask(resource.text) } } : block;
    }
    case 'image':
    case 'audio':
      return block;
    default:
      // A block of a later revision: every string in it masked.
      return masker.maskValue(block as ContentBlock).value;
  }
}

/** A tool result as it goes to the chat: every text masked, acting links made plain text. */
export function resultForChat(result: CallToolResult, masker: Masker): CallToolResult {
  const out: CallToolResult = { ...result, content: (result.content ?? []).map((b) => maskBlock(b, masker)) };
  if (result.structuredContent !== undefined) out.structuredContent = masker.maskValue(result.structuredContent).value;
  return out;
}

export function readForChat(result: ReadResourceResult, masker: Masker): ReadResourceResult {
  return {
    ...result,
    contents: result.contents.map((c) => ('text' in c ? { ...c, text: masker.maskText(c.text).text } : c)),
  };
}

export function promptForChat(result: GetPromptResult, masker: Masker): GetPromptResult {
  return {
    ...result,
    ...(result.description === undefined ? {} : { description: masker.maskText(result.description).text }),
    messages: result.messages.map((m) => ({ ...m, content: maskBlock(m.content, masker) })),
  };
}

/** A refusal as a tool result the chat's model can read and act on. */
export function refusedResult(server: string, tool: string, reason: string): CallToolResult {
  return { content: [{ type: 'text', text: `MCP Host refused ${server} › ${tool}: ${reason}.` }], isError: true };
}
