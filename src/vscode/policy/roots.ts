import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { parseExtraRoots } from '../../core/policy/roots';
import type { Root } from '../../core';
import { Settings } from '../common/ids';
import { cachedSetting } from '../common/settingCache';

const warned = new Set<string>();

/** `mcpHost.roots.extra` from the user's (or machine's) settings only: a workspace cannot widen the roots. Cached until it changes. */
export const extraRoots = cachedSetting(`${Settings.section}.${Settings.rootsExtra}`, (): readonly Root[] => {
  const value = vscode.workspace.getConfiguration(Settings.section).inspect<unknown>(Settings.rootsExtra)?.globalValue;
  const { roots, problems } = parseExtraRoots(value, homedir());
  for (const problem of problems) {
    if (warned.has(problem)) continue;
    warned.add(problem);
    console.warn(`MCP Host: mcpHost.roots.extra: ${problem}`);
  }
  return roots;
});
