import { McpError } from '../protocol/errors';
import type { ServerDefinition } from './definition';

export interface VariableContext {
  /** The folder `${workspaceFolder}` means: the definition's own folder, else the first one. */
  workspaceFolder?: string;
  userHome: string;
  env: Record<string, string | undefined>;
  /** Asks for `${input:ID}` (a secret the editor keeps); absent where nothing can ask. */
  input?(id: string): Promise<string>;
}

const VARIABLE = /\$\{([^}]+)\}/g;

/** Replaces `${…}` variables in every string that reaches the process or the network. */
export async function resolveVariables(def: ServerDefinition, ctx: VariableContext): Promise<ServerDefinition> {
  const inputs = new Map<string, string>();
  // Ask for each input once, in order of appearance, before substituting synchronously.
  for (const text of stringsOf(def)) {
    for (const match of text.matchAll(VARIABLE)) {
      const [kind, arg] = split(match[1]);
      if (kind === 'input' && !inputs.has(arg)) {
        if (!ctx.input) throw McpError.invalidParams(`${def.name}: \${input:${arg}} needs the editor to ask for it`);
        inputs.set(arg, await ctx.input(arg));
      }
    }
  }
  const sub = (text: string) =>
    text.replace(VARIABLE, (_all, body: string) => {
      const [kind, arg] = split(body);
      switch (kind) {
        case 'workspaceFolder':
          if (!ctx.workspaceFolder) throw McpError.invalidParams(`${def.name}: \${workspaceFolder} is used but no folder is open`);
          return ctx.workspaceFolder;
        case 'userHome':
          return ctx.userHome;
        case 'env':
          return ctx.env[arg] ?? '';
        case 'input':
          return inputs.get(arg) ?? '';
        default:
          throw McpError.invalidParams(`${def.name}: unknown variable \${${body}}`);
      }
    });
  const mapRecord = <V extends string | null>(r: Record<string, V>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? sub(v) : v])) as Record<string, V>;
  if (def.type === 'http') return { ...def, url: sub(def.url), headers: mapRecord(def.headers), roots: def.roots.map(sub) };
  return {
    ...def,
    command: sub(def.command),
    args: def.args.map(sub),
    env: mapRecord(def.env),
    envFile: def.envFile === undefined ? undefined : sub(def.envFile),
    cwd: def.cwd === undefined ? undefined : sub(def.cwd),
    roots: def.roots.map(sub),
  };
}

function split(body: string): [string, string] {
  const colon = body.indexOf(':');
  return colon === -1 ? [body, ''] : [body.slice(0, colon), body.slice(colon + 1)];
}

function stringsOf(def: ServerDefinition): string[] {
  if (def.type === 'http') return [def.url, ...Object.values(def.headers), ...def.roots];
  return [
    def.command,
    ...def.args,
    ...Object.values(def.env).filter((v): v is string => typeof v === 'string'),
    def.envFile ?? '',
    def.cwd ?? '',
    ...def.roots,
  ];
}
