import type { CreateMessageParams, SamplingMessage, Tool } from '../protocol/types';

/** One block of a sampling message, as a server may send it (unknown kinds kept as they came). */
export type SamplingBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; toolUseId: string; content: Array<{ type: string; [key: string]: unknown }>; isError?: boolean }
  | { type: 'other'; kind: string };

/** The blocks of a message, checked field by field: a malformed block is a protocol error, not a crash. */
export function messageBlocks(m: SamplingMessage): SamplingBlock[] {
  const raw = (Array.isArray(m.content) ? m.content : [m.content]) as unknown[];
  return raw.map((b, i) => {
    const block = (b ?? {}) as Record<string, unknown>;
    const where = `content block ${i} (${String(block.type)})`;
    const str = (key: string) => {
      if (typeof block[key] !== 'string') throw new TypeError(`${where}: "${key}" must be a string`);
      return block[key] as string;
    };
    switch (block.type) {
      case 'text':
        return { type: 'text', text: str('text') };
      case 'image':
      case 'audio':
        return { type: block.type, data: str('data'), mimeType: str('mimeType') };
      case 'tool_use': {
        const input = block.input;
        if (!input || typeof input !== 'object' || Array.isArray(input)) throw new TypeError(`${where}: "input" must be an object`);
        return { type: 'tool_use', id: str('id'), name: str('name'), input: input as Record<string, unknown> };
      }
      case 'tool_result': {
        if (!Array.isArray(block.content)) throw new TypeError(`${where}: "content" must be an array`);
        return {
          type: 'tool_result',
          toolUseId: str('toolUseId'),
          content: block.content as Array<{ type: string }>,
          ...(block.isError === true ? { isError: true } : {}),
        };
      }
      default:
        return { type: 'other', kind: String(block.type) };
    }
  });
}

/**
 * The 2025-11-25 rules for tool use in a sampling conversation: `tool_use` only from the
 * assistant, a user message with tool results holds nothing else, and every result answers a
 * `tool_use` of the message right before it. Returns what is wrong, or undefined.
 */
export function toolMessageProblem(params: CreateMessageParams): string | undefined {
  let previousUses = new Set<string>();
  for (const [i, m] of params.messages.entries()) {
    let blocks: SamplingBlock[];
    try {
      blocks = messageBlocks(m);
    } catch (e) {
      return `message ${i}: ${(e as Error).message}`;
    }
    const uses = blocks.filter((b) => b.type === 'tool_use');
    const results = blocks.filter((b) => b.type === 'tool_result');
    if (uses.length && m.role !== 'assistant') return `message ${i}: tool_use content is only for assistant messages`;
    if (results.length) {
      if (m.role !== 'user') return `message ${i}: tool_result content is only for user messages`;
      if (results.length !== blocks.length) return `message ${i}: a message with tool results must contain only tool results`;
      for (const r of results)
        if (!previousUses.has(r.toolUseId))
          return `message ${i}: tool_result "${r.toolUseId}" answers no tool_use of the message before it`;
    }
    previousUses = new Set(uses.map((u) => u.id));
  }
  if (params.toolChoice?.mode && !['auto', 'required', 'none'].includes(params.toolChoice.mode))
    return `toolChoice.mode "${String(params.toolChoice.mode)}" is not auto, required or none`;
  return undefined;
}

/** Whether the request needs the model API's tool calling: tools offered, or tool use in the conversation. */
export function usesTools(params: CreateMessageParams): boolean {
  if (params.tools?.length && params.toolChoice?.mode !== 'none') return true;
  return params.messages.some((m) =>
    (Array.isArray(m.content) ? m.content : [m.content]).some((b) => b?.type === 'tool_use' || b?.type === 'tool_result'),
  );
}

/** The tools to hand the model: none when the server said `toolChoice: none`. */
export function offeredTools(params: CreateMessageParams): Tool[] {
  return params.toolChoice?.mode === 'none' ? [] : (params.tools ?? []);
}

/** A block in words, for consent, history and models that cannot take the block itself. */
export function describeBlock(b: SamplingBlock): string {
  switch (b.type) {
    case 'text':
      return b.text;
    case 'image':
    case 'audio':
      return `[${b.type} ${b.mimeType}, ${Buffer.byteLength(b.data, 'base64')} bytes]`;
    case 'tool_use':
      return `[tool_use ${b.id}: ${b.name} ${JSON.stringify(b.input)}]`;
    case 'tool_result':
      return `[tool_result ${b.toolUseId}${b.isError ? ' (error)' : ''}: ${resultText(b)}]`;
    default:
      return `[${b.kind} content omitted]`;
  }
}

/** The text of a tool result's content blocks; other blocks described. */
export function resultText(b: Extract<SamplingBlock, { type: 'tool_result' }>): string {
  return b.content
    .map((c) => {
      if (c.type === 'text' && typeof c.text === 'string') return c.text;
      if ((c.type === 'image' || c.type === 'audio') && typeof c.data === 'string')
        return `[${c.type} ${String(c.mimeType)}, ${Buffer.byteLength(c.data, 'base64')} bytes]`;
      if (c.type === 'resource_link') return `[resource_link ${String(c.uri)}]`;
      if (c.type === 'resource') return `[resource ${String((c.resource as { uri?: string } | undefined)?.uri)}]`;
      return `[${c.type} content omitted]`;
    })
    .join('\n');
}
