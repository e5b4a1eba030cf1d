import type { DefinitionDiagnostic, Prompt, ServerOrigin, Resource, ResourceTemplate, ServerHandle, Tool } from '../../core';

export type GroupKind = 'tools' | 'prompts' | 'resources' | 'templates';

/** Every kind of node in the Servers view; `contextValue`s derive from `kind`. */
export type TreeNode =
  | { kind: 'server'; server: ServerHandle }
  | { kind: 'invalid'; diagnostic: DefinitionDiagnostic }
  | { kind: 'blocked'; name: string; origin: ServerOrigin }
  | { kind: 'group'; server: ServerHandle; group: GroupKind }
  | { kind: 'tool'; server: ServerHandle; tool: Tool }
  | { kind: 'prompt'; server: ServerHandle; prompt: Prompt }
  | { kind: 'resource'; server: ServerHandle; resource: Resource }
  | { kind: 'template'; server: ServerHandle; template: ResourceTemplate };
