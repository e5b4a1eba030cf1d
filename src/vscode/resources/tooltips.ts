import * as vscode from 'vscode';
import { type Annotations, type Resource, type ResourceTemplate } from '../../core';

/**
 * Tooltips of resources and templates: everything the listing says (size, audience, priority,
 * last modified), as plain text (not Markdown), since all of it is the server's.
 */
export function resourceTooltip(r: Resource): string {
  return lines([
    `${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}`,
    r.title && r.title !== r.name ? `${r.title} — ${r.name}` : undefined,
    r.description,
    typeof r.size === 'number' && r.size >= 0 ? vscode.l10n.t('Size: {0}', sizeLabel(r.size)) : undefined,
    ...annotationLines(r.annotations),
  ]);
}

export function templateTooltip(t: ResourceTemplate): string {
  return lines([
    `${t.uriTemplate}${t.mimeType ? ` (${t.mimeType})` : ''}`,
    t.title && t.title !== t.name ? `${t.title} — ${t.name}` : undefined,
    t.description,
    ...annotationLines(t.annotations),
  ]);
}

function annotationLines(a: Annotations | undefined): Array<string | undefined> {
  if (!a) return [];
  const audience = Array.isArray(a.audience) ? a.audience.filter((x) => typeof x === 'string') : [];
  const modified = typeof a.lastModified === 'string' ? Date.parse(a.lastModified) : NaN;
  return [
    audience.length ? vscode.l10n.t('Audience: {0}', audience.join(', ')) : undefined,
    typeof a.priority === 'number' && Number.isFinite(a.priority) ? vscode.l10n.t('Priority: {0}', a.priority) : undefined,
    Number.isFinite(modified) ? vscode.l10n.t('Last modified: {0}', new Date(modified).toLocaleString()) : undefined,
  ];
}

function sizeLabel(bytes: number): string {
  if (bytes < 1024) return vscode.l10n.t('{0} bytes', bytes);
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return vscode.l10n.t('{0} {1} ({2} bytes)', value.toFixed(1), units[unit], bytes);
}

function lines(parts: Array<string | undefined>): string {
  return parts.filter((p): p is string => !!p).join('\n');
}
