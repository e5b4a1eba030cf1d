/**
 * The servers one gateway session offers, under the names its client calls them by. VS Code's chat
 * gets one server per session, its names kept. An agent (connected to the editor, or the client of
 * `mcp-host serve --config`) gets several through one session: each tool and prompt is then
 * `<server>__<tool>`, a name that stays the same when the configuration gains a server, and a name
 * is routed back to its server by the longest server name it starts with. Resources keep their
 * URIs (a client reads the URI a server gave): a URI goes to the server that listed it (when two
 * list the same URI, the first in the configuration's order has it, and the other's is not listed),
 * else to the first whose resource template matches it, else, with one server, to that one.
 * Completion follows its prompt's name or its template.
 */
import type { Disposable } from 'vscode-jsonrpc/node';
import { McpError } from '../protocol/errors';
import type {
  CallToolResult,
  CompleteParams,
  CompleteResult,
  GetPromptResult,
  LoggingMessageNotificationParams,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from '../protocol/types';
import { refusedResult } from './forChat';
import type { ForwardOptions, Forwarder } from './forward';

/** Between a server's name and its tool's or prompt's name, when a session offers several servers. */
export const NAME_SEPARATOR = '__';

export interface CatalogServer {
  /** The name the configuration (or the person's settings) gives it. */
  name: string;
  forwarder: Forwarder;
}

/** A list a session's client is told changed. */
export type CatalogList = 'tools' | 'prompts' | 'resources';

type Signal = Pick<ForwardOptions, 'signal'>;

export class Catalog {
  /** Which server listed each resource URI, from the last resources/list. */
  private readonly owners = new Map<string, CatalogServer>();

  constructor(
    readonly servers: readonly CatalogServer[],
    /** Whether names carry their server's (`<server>__<tool>`): always with several servers, never with one unless asked. */
    readonly prefixed = servers.length > 1,
  ) {}

  /** The name a client calls a server's tool or prompt by. */
  nameFor(server: string, name: string): string {
    return this.prefixed ? `${server}${NAME_SEPARATOR}${name}` : name;
  }

  /** The server of a name the client gave, and the server's own name for it; undefined when no server has that prefix. */
  route(name: string): { server: CatalogServer; name: string } | undefined {
    if (!this.prefixed) return this.servers.length ? { server: this.servers[0], name } : undefined;
    let best: CatalogServer | undefined;
    for (const s of this.servers)
      if (name.startsWith(`${s.name}${NAME_SEPARATOR}`) && (!best || s.name.length > best.name.length)) best = s;
    return best && { server: best, name: name.slice(best.name.length + NAME_SEPARATOR.length) };
  }

  /**
   * Every server's items, renamed. With several servers one that fails (not running, an error) is
   * left out rather than failing the whole list; with one, its error is the answer.
   */
  private async gather<T>(list: (s: CatalogServer) => Promise<T[]>): Promise<Array<{ server: CatalogServer; items: T[] }>> {
    if (this.servers.length === 1) return [{ server: this.servers[0], items: await list(this.servers[0]) }];
    return Promise.all(this.servers.map(async (server) => ({ server, items: await list(server).catch(() => [] as T[]) })));
  }

  async listTools(options?: Signal): Promise<Tool[]> {
    const all = await this.gather((s) => s.forwarder.listTools(options));
    return all.flatMap(({ server, items }) => items.map((t) => ({ ...t, name: this.nameFor(server.name, t.name) })));
  }

  callTool(name: string, args: Record<string, unknown>, options: ForwardOptions): Promise<CallToolResult> {
    const to = this.route(name);
    if (!to) return Promise.resolve(refusedResult('MCP Host', name, 'no server of this session has a tool of that name'));
    return to.server.forwarder.callTool(to.name, args, options);
  }

  async listPrompts(options?: Signal): Promise<Prompt[]> {
    const all = await this.gather((s) => s.forwarder.listPrompts(options));
    return all.flatMap(({ server, items }) => items.map((p) => ({ ...p, name: this.nameFor(server.name, p.name) })));
  }

  getPrompt(name: string, args: Record<string, string>, options: ForwardOptions): Promise<GetPromptResult> {
    const to = this.route(name);
    if (!to) return Promise.reject(McpError.invalidParams(`no server of this session has a prompt named ${JSON.stringify(name)}`));
    return to.server.forwarder.getPrompt(to.name, args, options);
  }

  async listResources(options?: Signal): Promise<Resource[]> {
    const all = await this.gather((s) => s.forwarder.listResources(options));
    this.owners.clear();
    const out: Resource[] = [];
    for (const { server, items } of all) {
      for (const r of items) {
        // The first server to list a URI has it: a client could not tell the second one's apart.
        if (this.owners.has(r.uri)) continue;
        this.owners.set(r.uri, server);
        out.push(r);
      }
    }
    return out;
  }

  async listResourceTemplates(options?: Signal): Promise<ResourceTemplate[]> {
    const all = await this.gather((s) => s.forwarder.listResourceTemplates(options));
    const seen = new Set<string>();
    return all.flatMap(({ items }) => items.filter((t) => !seen.has(t.uriTemplate) && seen.add(t.uriTemplate)));
  }

  /** The server a resource URI goes to: the one that listed it, else the first whose template matches, else the only one. */
  private ownerOf(uri: string): CatalogServer {
    const owner =
      this.owners.get(uri) ??
      this.servers.find((s) => s.forwarder.shared.handle.resources.some((r) => r.uri === uri)) ??
      this.servers.find((s) => s.forwarder.shared.handle.templates.some((t) => templateMatches(t.uriTemplate, uri))) ??
      (this.servers.length === 1 ? this.servers[0] : undefined);
    if (!owner) throw McpError.invalidParams(`no server of this session lists or has a template for ${uri}`);
    return owner;
  }

  readResource(uri: string, options: ForwardOptions): Promise<ReadResourceResult> {
    return Promise.resolve()
      .then(() => this.ownerOf(uri))
      .then((owner) => owner.forwarder.readResource(uri, options));
  }

  subscribe(uri: string, options: ForwardOptions): Promise<Disposable> {
    return Promise.resolve()
      .then(() => this.ownerOf(uri))
      .then((owner) => owner.forwarder.subscribe(uri, options));
  }

  complete(params: CompleteParams, options: ForwardOptions): Promise<CompleteResult> {
    const { ref } = params;
    if (ref.type === 'ref/prompt') {
      const to = this.route(ref.name);
      if (!to) return Promise.reject(McpError.invalidParams(`no server of this session has a prompt named ${JSON.stringify(ref.name)}`));
      return to.server.forwarder.complete({ ...params, ref: { ...ref, name: to.name } }, options);
    }
    const owner =
      this.servers.find((s) => s.forwarder.shared.handle.templates.some((t) => t.uriTemplate === ref.uri)) ??
      (this.servers.length === 1 ? this.servers[0] : undefined);
    if (!owner) return Promise.reject(McpError.invalidParams(`no server of this session has the template ${ref.uri}`));
    return owner.forwarder.complete(params, options);
  }

  /** Tells `listener` when one of the lists a client holds changed on any server (or what MCP Host offers of it did). */
  onListChanged(listener: (list: CatalogList) => void): Disposable {
    const subscriptions = this.servers.flatMap((s) => [
      s.forwarder.shared.handle.onDidChangeLists((kind) => listener(kind === 'templates' ? 'resources' : kind)),
      s.forwarder.onListStale((list) => listener(list)),
    ]);
    return { dispose: () => subscriptions.forEach((d) => d.dispose()) };
  }

  /** `notifications/resources/updated` of any server, for the URIs this session subscribed. */
  onResourceUpdated(listener: (uri: string) => void): Disposable {
    const subscriptions = this.servers.map((s) => s.forwarder.shared.handle.onResourceUpdated(listener));
    return { dispose: () => subscriptions.forEach((d) => d.dispose()) };
  }

  /** The servers' own log messages (`notifications/message`), each with its server's name as the logger, masked. */
  onLogMessage(listener: (message: LoggingMessageNotificationParams) => void): Disposable {
    const subscriptions = this.servers.map((s) =>
      s.forwarder.shared.handle.onLogMessage((m) =>
        listener({
          level: m.level,
          logger: m.logger === undefined ? s.name : `${s.name}/${m.logger}`,
          data: s.forwarder.shared.masker().maskValue(m.data).value,
        }),
      ),
    );
    return { dispose: () => subscriptions.forEach((d) => d.dispose()) };
  }

  /** What the session declares: every capability a running server has that the gateway forwards; all of them while one does not run. */
  capabilities(): { tools: boolean; resources: boolean; prompts: boolean; completions: boolean } {
    const caps = this.servers.map((s) => s.forwarder.shared.handle.client?.serverCapabilities);
    const any = (has: (c: NonNullable<(typeof caps)[number]>) => unknown): boolean => caps.some((c) => !c || Boolean(has(c)));
    return {
      tools: any((c) => c.tools),
      resources: any((c) => c.resources),
      prompts: any((c) => c.prompts),
      completions: any((c) => c.completions),
    };
  }
}

/** Whether a URI could come from a URI template (RFC 6570): each `{…}` expression stands for any text. */
export function templateMatches(template: string, uri: string): boolean {
  const pattern = template
    .split(/(\{[^}]*\})/)
    .map((part) => (part.startsWith('{') && part.endsWith('}') ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`, 's').test(uri);
}
