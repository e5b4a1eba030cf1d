// The chat's side of a call, for the Playwright tests: "Test Chat: Call the Shared echo as the Chat"
// has VS Code's own MCP client call `echo` of the server MCP Host shares, the way the chat's agent
// calls a tool (`vscode.lm.invokeTool`, here without a chat request), so that VS Code's confirmation
// of a tool that is not read-only shows in the workbench for the test to answer. Each outcome is
// appended as a JSON line to $MCP_HOST_TEST_CHAT_LOG.
import * as fs from 'node:fs';
import * as vscode from 'vscode';

/** What VS Code 1.139 offers that @types/vscode 1.90 does not name. */
interface LmTools {
  tools: ReadonlyArray<{ name: string }>;
  invokeTool(name: string, options: { input: object; toolInvocationToken: undefined }): Thenable<{ content: unknown[] }>;
}
const lm = () => vscode.lm as unknown as LmTools;
/** VS Code names a shared server's tools after the name the gateway gives it, the server's own in MCP Host ("chat-shared"). */
const sharedEcho = () => lm().tools.find((t) => /^mcp_chat-shared\d*_echo$/.test(t.name))?.name;

let calls = 0;

function record(entry: Record<string, unknown>): void {
  const log = process.env.MCP_HOST_TEST_CHAT_LOG;
  if (log) fs.appendFileSync(log, `${JSON.stringify(entry)}\n`);
}

/**
 * The shared echo, after asking VS Code to start every MCP server and wait for its tools, as the chat
 * does before each request (`chat.mcp.autostart`, "newAndOutdated" by default): a server whose
 * definition changed (MCP Host ended its session) is started again and its tools listed anew, instead
 * of VS Code deciding about a confirmation from the tools it had cached.
 */
async function startedEcho(): Promise<string | undefined> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
    const name = sharedEcho();
    if (name || Date.now() > deadline) return name;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function callSharedEcho(): Promise<void> {
  const call = ++calls;
  const tool = await startedEcho();
  if (!tool) {
    record({ call, outcome: 'no-tool', tools: lm().tools.map((t) => t.name) });
    return;
  }
  const text = `from the chat, call ${call}`;
  record({ call, tool, outcome: 'invoking' });
  try {
    const result = await lm().invokeTool(tool, { input: { text }, toolInvocationToken: undefined });
    const answer = result.content.map((c) => (c as { value?: string }).value ?? '').join('');
    record({ call, tool, outcome: 'ok', text: answer });
  } catch (error) {
    const e = error as Error;
    record({
      call,
      tool,
      outcome: e instanceof vscode.CancellationError || e?.name === 'Canceled' ? 'cancelled' : 'error',
      error: `${e?.name}: ${e?.message}`,
    });
  }
}

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(vscode.commands.registerCommand('mcpHostTestChat.callSharedEcho', callSharedEcho));
}
