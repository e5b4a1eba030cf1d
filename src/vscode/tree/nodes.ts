import type { ToolTask } from '../tasks/toolTasks';
import type { AgentTarget } from '../../core/agents/targets';
import type { GateSession } from '../../core/policy/session';
import type { AgentEntry } from '../agents/entries';
import type { DefinitionDiagnostic, Prompt, ServerOrigin, Resource, ResourceTemplate, ServerHandle, Tool } from '../../core';

/** `tasks`: the tool calls of this session that run as tasks on the server. */
export type GroupKind = 'tools' | 'prompts' | 'resources' | 'templates' | 'tasks';

/** Every kind of node in the Servers view; `contextValue`s derive from `kind`. */
export type TreeNode =
  | { kind: 'server'; server: ServerHandle }
  | { kind: 'invalid'; diagnostic: DefinitionDiagnostic }
  | { kind: 'blocked'; name: string; origin: ServerOrigin }
  | { kind: 'group'; server: ServerHandle; group: GroupKind }
  | { kind: 'tool'; server: ServerHandle; tool: Tool }
  | { kind: 'prompt'; server: ServerHandle; prompt: Prompt }
  | { kind: 'resource'; server: ServerHandle; resource: Resource }
  | { kind: 'template'; server: ServerHandle; template: ResourceTemplate }
  | { kind: 'task'; server: ServerHandle; entry: ToolTask }
  /** The agents connected to this window (Connect an Agent), their entries, and each entry's live sessions. */
  | { kind: 'agents' }
  | { kind: 'agentEntry'; target: AgentTarget; entry: AgentEntry }
  | { kind: 'agentSession'; session: GateSession };
