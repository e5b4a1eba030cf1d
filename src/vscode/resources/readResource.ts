import * as vscode from 'vscode';
import {
  expandTemplate,
  fromTemplate,
  templateVariables,
  withIcon,
  titleAndName,
  type Redact,
  type Resource,
  type ResourceTemplate,
  type ServerHandle,
} from '../../core';
import { knownIcon, warmIcons } from '../common/icons';
import type { GatedServer } from '../../core/policy/gated';
import { askWithCompletion } from '../window/completionPick';
import type { McpHost } from '../host/host';
import { notify } from '../window/notifications';
import { pickOne, type ShownPickItem } from '../window/quickPicks';
import { toResourceUri } from './uri';
import { cancelOpen, expectOpen } from './readAhead';

/**
 * Opens a resource (or a filled-in template) as a read-only document. It is read first: a read
 * the server refuses opens nothing (the provider has shown why), instead of an editor pane that
 * says only "could not be opened"; the editor then gets the bytes of that one read.
 */
export async function openResource(
  server: ServerHandle,
  resource: Pick<Resource, 'uri' | 'name' | 'mimeType'>,
): Promise<vscode.Uri | undefined> {
  const uri = toResourceUri(server.name, resource.uri, resource.name, resource.mimeType);
  expectOpen(uri.toString());
  try {
    await vscode.workspace.fs.readFile(uri);
  } catch {
    cancelOpen(uri.toString());
    return undefined;
  }
  // vscode.open picks the right editor: the image preview for images, a text editor otherwise.
  await vscode.commands.executeCommand('vscode.open', uri, { preview: false });
  return uri;
}

/** `gate`: the person's, for the completion requests; `redact`: the host's, for the template's texts and the server's suggestions. */
export async function fillTemplate(
  server: ServerHandle,
  gate: GatedServer,
  template: ResourceTemplate,
  redact: Redact,
): Promise<vscode.Uri | undefined> {
  const client = server.client;
  if (!client) return undefined;
  const values: Record<string, string> = {};
  const names = templateVariables(template.uriTemplate);
  for (const [i, name] of names.entries()) {
    const value = await askWithCompletion({
      client,
      gate,
      ref: { type: 'ref/resource', uri: template.uriTemplate },
      argument: name,
      title: `${server.name} › ${template.name}: ${name} (${i + 1}/${names.length})`,
      // The placeholder says what the value is for while nothing is typed, the hint while typing.
      prompt: template.description ? template.description.split('\n')[0] : vscode.l10n.t('{0} in {1}', name, template.uriTemplate),
      required: true,
      context: values,
      hint: template.description ? `${name}: ${template.description.split('\n')[0]}` : undefined,
      log: (message) => server.log('warning', message),
      redact,
    });
    if (value === undefined) return undefined;
    values[name] = value;
  }
  const uri = expandTemplate(template.uriTemplate, values);
  return openResource(server, { uri, name: lastName(uri, template.name), mimeType: template.mimeType });
}

type ResourcePickItem = ShownPickItem & { server: ServerHandle; resource?: Resource; template?: ResourceTemplate };

/** The Read Resource picker's items: every resource and template of every running server, with its icon where the server gives one. */
export async function resourcePickItems(host: McpHost, servers: readonly ServerHandle[]): Promise<ResourcePickItem[]> {
  const running = servers.filter((s) => s.client);
  await warmIcons(running.flatMap((s) => [...s.resources.map((r) => r.icons), ...s.templates.map((t) => t.icons)]));
  return running.flatMap((server) => [
    ...server.resources.map((resource): ResourcePickItem => ({
      label: host.shown(`${server.name} › ${titleAndName(resource).label}`),
      iconPath: knownIcon(resource.icons),
      description: host.shown([titleAndName(resource).name, resource.uri].filter(Boolean).join(' · ')),
      server,
      resource,
    })),
    ...server.templates.map((template): ResourcePickItem => {
      const iconPath = knownIcon(template.icons);
      return {
        // Without an icon of its own, a template is told from a resource by the theme's.
        label: iconPath
          ? host.shown(`${server.name} › ${titleAndName(template).label}`)
          : withIcon('file-code', host.shown(`${server.name} › ${titleAndName(template).label}`)),
        iconPath,
        description: host.shown([titleAndName(template).name, template.uriTemplate].filter(Boolean).join(' · ')),
        server,
        template,
      };
    }),
  ]);
}

/** "MCP Host: Read Resource...": every resource and template of every running server. */
export async function readResourceCommand(host: McpHost): Promise<void> {
  const items = await resourcePickItems(host, host.servers);
  if (!items.length) {
    void notify('info', fromTemplate(vscode.l10n.t('MCP Host: no running server offers resources.')));
    return;
  }
  const pick = await pickOne(items, {
    title: fromTemplate(vscode.l10n.t('MCP Host: Read Resource')),
    placeHolder: fromTemplate(vscode.l10n.t('Which resource?')),
    matchOnDescription: true,
  });
  if (!pick) return;
  if (pick.resource) await openResource(pick.server, pick.resource);
  else if (pick.template)
    await fillTemplate(pick.server, host.gate.serverFor(pick.server, 'person'), pick.template, (text) => host.redact(text));
}

function lastName(uri: string, fallback: string): string {
  const last = uri.split(/[?#]/)[0].split('/').filter(Boolean).pop();
  return last ? decodeURIComponentSafe(last) : fallback;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
