import { createHash } from 'node:crypto';
import type { AppCsp } from './uiResources';

/**
 * A source the app may name in `_meta.ui.csp`: a scheme-qualified host (a leading `*.` allowed,
 * a port or `:*` allowed), nothing else. Keywords (`'unsafe-eval'`), bare `*`, schemes such as
 * `data:` and anything with a space or `;` (which would add a directive) are dropped.
 */
const SOURCE = /^(https?|wss?):\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:(\d{1,5}|\*))?$/i;

export interface CheckedCsp {
  connect: string[];
  resource: string[];
  frame: string[];
  baseUri: string[];
  /** What was asked for but not taken, for the log. */
  dropped: string[];
}

/** The app's declared domains, each checked; what does not look like an origin is dropped. */
export function checkCsp(csp: AppCsp): CheckedCsp {
  const dropped: string[] = [];
  const take = (list: string[] | undefined) =>
    (list ?? []).filter((d) => {
      const ok = SOURCE.test(d);
      if (!ok) dropped.push(d);
      return ok;
    });
  return { connect: take(csp.connectDomains), resource: take(csp.resourceDomains), frame: take(csp.frameDomains), baseUri: take(csp.baseUriDomains), dropped };
}

const orNone = (list: string[]) => (list.length ? list.join(' ') : "'none'");

/**
 * The policy the app's own document carries (a `<meta>` at the top of its `<head>`): the spec's
 * default (nothing outside the document) widened only by the declared, checked domains.
 */
export function appFrameCsp(csp: CheckedCsp): string {
  const res = csp.resource.join(' ');
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${res}`.trim(),
    `style-src 'unsafe-inline' ${res}`.trim(),
    `img-src data: blob: ${res}`.trim(),
    `font-src data: ${res}`.trim(),
    `media-src data: blob: ${res}`.trim(),
    `connect-src ${orNone(csp.connect)}`,
    `frame-src ${orNone(csp.frame)}`,
    `base-uri ${orNone(csp.baseUri)}`,
    "form-action 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * The policy of the webview page that holds the app's frame. The frame (a `srcdoc`) inherits it,
 * so it allows what the app needs, but script only by nonce (our relay) or by the hash of one of
 * the app's own inline scripts: no other script can run in the page, and no `'unsafe-inline'`.
 */
export function hostPageCsp(csp: CheckedCsp, nonce: string, scriptHashes: string[], cspSource: string): string {
  const res = csp.resource.join(' ');
  return [
    "default-src 'none'",
    [`script-src 'nonce-${nonce}'`, ...scriptHashes.map((h) => `'${h}'`), res].filter(Boolean).join(' '),
    `style-src ${cspSource} 'unsafe-inline' ${res}`.trim(),
    `img-src data: blob: ${res}`.trim(),
    `font-src data: ${res}`.trim(),
    `media-src data: blob: ${res}`.trim(),
    `connect-src ${orNone(csp.connect)}`,
    `frame-src ${orNone(csp.frame)}`,
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** `sha256-…` of every inline `<script>` (one without `src`) of the app's HTML. */
export function inlineScriptHashes(html: string): string[] {
  const hashes = new Set<string>();
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)) {
    if (/\ssrc\s*=/i.test(` ${m[1]}`)) continue;
    hashes.add(`sha256-${createHash('sha256').update(m[2], 'utf8').digest('base64')}`);
  }
  return [...hashes];
}

/** The app's HTML with its policy as the first thing in `<head>`, so it holds before any of its own markup. */
export function withFrameCsp(html: string, policy: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, '&quot;')}">`;
  const head = /<head\b[^>]*>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  return `<!DOCTYPE html><html><head>${meta}</head><body>${html}</body></html>`;
}
