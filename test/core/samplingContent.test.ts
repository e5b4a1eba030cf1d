import { strict as assert } from 'node:assert';
import {
  McpClient as Client,
  describeBlock,
  messageBlocks,
  offeredTools,
  toolMessageProblem,
  usesTools,
  type CreateMessageParams,
  type SamplingMessage,
} from '../../src/core';

const ask: SamplingMessage = { role: 'user', content: { type: 'text', text: 'weather in Oslo?' } };
const use: SamplingMessage = { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Oslo' } }] };
const result = (id: string): SamplingMessage => ({
  role: 'user',
  content: [{ type: 'tool_result', toolUseId: id, content: [{ type: 'text', text: 'sunny' }] }],
});
const tool = { name: 'get_weather', description: 'The weather', inputSchema: { type: 'object' as const } };
const params = (messages: SamplingMessage[], more: Partial<CreateMessageParams> = {}): CreateMessageParams => ({
  messages,
  maxTokens: 10,
  ...more,
});

describe('sampling content and tool use (2025-11-25)', () => {
  it('accepts a tool loop whose results answer the tool_use right before them', () => {
    assert.equal(toolMessageProblem(params([ask, use, result('c1')], { tools: [tool] })), undefined);
  });
  it('refuses results that answer nothing, are mixed with other content, or come from the wrong role', () => {
    assert.match(toolMessageProblem(params([ask, use, result('c2')]))!, /message 2: tool_result "c2" answers no tool_use/);
    assert.match(toolMessageProblem(params([ask, result('c1')]))!, /answers no tool_use/);
    const mixed: SamplingMessage = { role: 'user', content: [...(result('c1').content as never[]), { type: 'text', text: 'and more' }] };
    assert.match(toolMessageProblem(params([ask, use, mixed]))!, /must contain only tool results/);
    assert.match(toolMessageProblem(params([{ ...use, role: 'user' }]))!, /tool_use content is only for assistant messages/);
    assert.match(
      toolMessageProblem(params([ask, use, { ...result('c1'), role: 'assistant' }]))!,
      /tool_result content is only for user messages/,
    );
    assert.match(toolMessageProblem(params([ask], { toolChoice: { mode: 'sometimes' as never } }))!, /toolChoice.mode "sometimes"/);
  });
  it('refuses malformed blocks with a message instead of throwing', () => {
    const bad = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'c1', name: 'x', input: 'not an object' }],
    } as unknown as SamplingMessage;
    assert.match(toolMessageProblem(params([ask, bad]))!, /message 1: content block 0 \(tool_use\): "input" must be an object/);
    assert.throws(
      () => messageBlocks({ role: 'user', content: { type: 'image', mimeType: 'image/png' } } as unknown as SamplingMessage),
      /"data" must be a string/,
    );
  });
  it('needs tool calling for offered tools (unless toolChoice is none) and for tool use in the messages', () => {
    assert.equal(usesTools(params([ask])), false);
    assert.equal(usesTools(params([ask], { tools: [tool] })), true);
    assert.equal(usesTools(params([ask], { tools: [tool], toolChoice: { mode: 'none' } })), false);
    assert.deepEqual(offeredTools(params([ask], { tools: [tool], toolChoice: { mode: 'none' } })), []);
    assert.equal(usesTools(params([ask, use, result('c1')], { toolChoice: { mode: 'none' } })), true);
  });
  it('describes images, audio, tool use and results in words', () => {
    const [image, audio] = messageBlocks({
      role: 'user',
      content: [
        { type: 'image', mimeType: 'image/png', data: Buffer.from('12345').toString('base64') },
        { type: 'audio', mimeType: 'audio/wav', data: Buffer.from('12').toString('base64') },
      ],
    });
    assert.equal(describeBlock(image), '[image image/png, 5 bytes]');
    assert.equal(describeBlock(audio), '[audio audio/wav, 2 bytes]');
    assert.equal(describeBlock(messageBlocks(use)[0]), '[tool_use c1: get_weather {"city":"Oslo"}]');
    assert.equal(describeBlock(messageBlocks(result('c1'))[0]), '[tool_result c1: sunny]');
  });
  it('declares sampling.tools only when the host says its sampling can call tools', () => {
    const createMessage = async () => ({ role: 'assistant' as const, content: { type: 'text' as const, text: '' }, model: 'm' });
    const caps = (samplingTools?: boolean) =>
      new Client({ onLog: () => ({ dispose() {} }) } as never, { handlers: { createMessage, samplingTools } }).clientCapabilities.sampling;
    assert.deepEqual(caps(true), { tools: {} });
    assert.deepEqual(caps(false), {});
    assert.deepEqual(caps(), {});
  });
});
