// The webview page that holds one app: a relay script of ours (by nonce) and the app's frame.
// The app's HTML goes into the frame's `srcdoc` only, never into this page; the frame is sandboxed
// without `allow-same-origin`, so it has an opaque origin of its own: it cannot reach this page,
// its `acquireVsCodeApi`, its storage or other panels, and cannot navigate the top window.
import { randomBytes } from 'node:crypto';
import { appFrameCsp, hostPageCsp, inlineScriptHashes, withFrameCsp, type CheckedCsp } from '../../core/apps/csp';
import type { AppPermission } from '../../core/apps/uiResources';

/**
 * The spec's standard style variables, each from the VS Code theme variable the webview defines;
 * the relay reads their computed values, so the app gets real colours, not `var()` it cannot resolve.
 */
const STYLE_VARIABLES: Record<string, string> = {
  '--color-background-primary': '--vscode-editor-background',
  '--color-background-secondary': '--vscode-sideBar-background',
  '--color-background-tertiary': '--vscode-editorWidget-background',
  '--color-background-inverse': '--vscode-editor-foreground',
  '--color-background-info': '--vscode-inputValidation-infoBackground',
  '--color-background-danger': '--vscode-inputValidation-errorBackground',
  '--color-background-warning': '--vscode-inputValidation-warningBackground',
  '--color-background-disabled': '--vscode-input-background',
  '--color-text-primary': '--vscode-editor-foreground',
  '--color-text-secondary': '--vscode-descriptionForeground',
  '--color-text-tertiary': '--vscode-disabledForeground',
  '--color-text-inverse': '--vscode-editor-background',
  '--color-text-info': '--vscode-textLink-foreground',
  '--color-text-danger': '--vscode-errorForeground',
  '--color-text-warning': '--vscode-editorWarning-foreground',
  '--color-text-disabled': '--vscode-disabledForeground',
  '--color-border-primary': '--vscode-panel-border',
  '--color-border-secondary': '--vscode-widget-border',
  '--color-border-danger': '--vscode-inputValidation-errorBorder',
  '--color-border-warning': '--vscode-inputValidation-warningBorder',
  '--color-ring-primary': '--vscode-focusBorder',
  '--font-sans': '--vscode-font-family',
  '--font-mono': '--vscode-editor-font-family',
  '--font-weight-normal': '--vscode-font-weight',
  '--font-text-md-size': '--vscode-font-size',
};

const FEATURES: Record<AppPermission, string> = {
  camera: 'camera',
  microphone: 'microphone',
  geolocation: 'geolocation',
  clipboardWrite: 'clipboard-write',
};

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export interface AppPage {
  html: string;
  /** The page's policy, for the log and tests. */
  pageCsp: string;
  frameCsp: string;
}

/**
 * The page for `appHtml`, its frame allowed only `granted` features and the checked domains. Above
 * the frame, a line of ours the app cannot reach: `origins` (what it may connect to, what was
 * refused) and, when the extension posts `{ notice }`, what went wrong (such as an app that never started).
 */
export function appPage(
  appHtml: string,
  csp: CheckedCsp,
  granted: AppPermission[],
  cspSource: string,
  title: string,
  origins: string,
): AppPage {
  const nonce = randomBytes(16).toString('base64');
  const frameCsp = appFrameCsp(csp);
  const pageCsp = hostPageCsp(csp, nonce, inlineScriptHashes(appHtml), cspSource);
  const allow = granted.map((p) => FEATURES[p]).join('; ');
  const relay = `(() => {
  const vscode = acquireVsCodeApi();
  const VARS = ${JSON.stringify(STYLE_VARIABLES)};
  const frame = () => document.getElementById('app');
  const theme = () => {
    const cls = document.body.classList;
    const kind = cls.contains('vscode-high-contrast-light') ? 'light' : cls.contains('vscode-high-contrast') ? 'dark' : cls.contains('vscode-light') ? 'light' : 'dark';
    const style = getComputedStyle(document.documentElement);
    const variables = {};
    for (const [name, from] of Object.entries(VARS)) { const v = style.getPropertyValue(from).trim(); if (v) variables[name] = v; }
    return { theme: kind, highContrast: cls.contains('vscode-high-contrast') || cls.contains('vscode-high-contrast-light'), variables };
  };
  // The app's own box: the page less our header line above it.
  const size = () => { const f = frame(); return { width: Math.round(f.clientWidth), height: Math.round(f.clientHeight) }; };
  window.addEventListener('message', (e) => {
    const f = frame();
    if (f && e.source === f.contentWindow) { vscode.postMessage({ fromApp: e.data }); return; }
    const d = e.data;
    // Only the extension (through VS Code's host frame, our parent) writes the notice; never a frame of the app.
    if (e.source === window.parent && d && typeof d === 'object' && typeof d.notice === 'string') {
      const n = document.getElementById('mcp-host-notice');
      n.textContent = d.notice;
      n.hidden = false;
      return;
    }
    if (f && d && typeof d === 'object' && 'toApp' in d) f.contentWindow.postMessage(d.toApp, '*');
  });
  document.addEventListener('DOMContentLoaded', () => {
    vscode.postMessage({ context: { ...theme(), size: size() } });
    new MutationObserver(() => vscode.postMessage({ context: theme() })).observe(document.body, { attributes: true, attributeFilter: ['class'] });
    new ResizeObserver(() => vscode.postMessage({ context: { size: size() } })).observe(frame());
  });
})();`;
  const html = `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${attr(pageCsp)}">
<title>${attr(title)}</title>
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden}body{display:flex;flex-direction:column}
header{font-size:0.85em;padding:2px 8px;color:var(--vscode-descriptionForeground);border-bottom:1px solid var(--vscode-panel-border,transparent);overflow-wrap:anywhere}
#mcp-host-notice{color:var(--vscode-editorWarning-foreground)}iframe{border:0;display:block;width:100%;flex:1}</style>
<script nonce="${nonce}">${relay}</script>
</head><body>
<header role="note"><div id="mcp-host-origins">${attr(origins)}</div><div id="mcp-host-notice" role="alert" hidden></div></header>
<iframe id="app" title="${attr(title)}" sandbox="allow-scripts allow-forms" allow="${attr(allow)}" referrerpolicy="no-referrer" srcdoc="${attr(withFrameCsp(appHtml, frameCsp))}"></iframe>
</body></html>`;
  return { html, pageCsp, frameCsp };
}
