import { createHash } from 'node:crypto';
import { isLoopbackUrl } from '../net/loopback';
import { isLocalAddress } from '../render/icons';
import type { AppCsp } from './uiResources';

/**
 * A source the app may name in `_meta.ui.csp`: a scheme-qualified host (a leading `*.` allowed,
 * a port or `:*` allowed), nothing else. Keywords (`'unsafe-eval'`), bare `*`, schemes such as
 * `data:` and anything with a space or `;` (which would add a directive) are dropped. A bracketed
 * IPv6 literal is recognised only to be refused with its reason (a CSP source cannot name one).
 */
const SOURCE = /^(https?|wss?):\/\/(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}|\*))?$/i;

/**
 * Suffixes under which anyone may register a name, so a wildcard over one (`*.co.uk`,
 * `*.github.io`) reaches every stranger's site. There is no public-suffix list among our
 * dependencies; this is a deliberately small table (the common second levels of country domains,
 * and shared hosting and tunnel domains), on top of the rule that a single label is always a suffix.
 */
const SECOND_LEVELS = new Set([
  'ac',
  'co',
  'com',
  'edu',
  'go',
  'gob',
  'gov',
  'gouv',
  'ltd',
  'me',
  'mil',
  'ne',
  'net',
  'nom',
  'or',
  'org',
  'plc',
  'sch',
]);
const SHARED_SUFFIXES = new Set([
  'amazonaws.com',
  'appspot.com',
  'azurewebsites.net',
  'blogspot.com',
  'cloudfront.net',
  'firebaseapp.com',
  'github.io',
  'githubusercontent.com',
  'gitlab.io',
  'herokuapp.com',
  'netlify.app',
  'ngrok-free.app',
  'ngrok.io',
  'pages.dev',
  'trycloudflare.com',
  'vercel.app',
  'web.app',
  'workers.dev',
]);

/** Names that mean the person's own machine or network wherever they are looked up. */
const LOCAL_NAMES = /(^|\.)(localhost|local|internal|lan|home\.arpa)$/;

/** Whether `host` (lower case, no wildcard) is a suffix under which others register names. */
export function isPublicSuffix(host: string): boolean {
  const labels = host.split('.');
  if (labels.length === 1) return true;
  if (labels.length === 2 && labels[1].length === 2 && SECOND_LEVELS.has(labels[0])) return true;
  return SHARED_SUFFIXES.has(host);
}

/** Why a declared source was not taken. */
export type CspRefusal =
  | 'notAnOrigin'
  /** `https://*.com`, `wss://*.co.uk`: every site under a public suffix. */
  | 'wildcardOverPublicSuffix'
  /** `https://com`, `https://co.uk`: a suffix, not anyone's site. */
  | 'noRegistrableDomain'
  /** Loopback, private, link-local or unspecified, by address or by name, from a server that is not itself on loopback. */
  | 'localAddress'
  /** A wildcard over an IP address (`*.1.2.3.4`). */
  | 'wildcardOverAddress'
  /** `http://[2001:db8::1]`: CSP sources cannot name IPv6 addresses, so it would allow nothing. */
  | 'ipv6';

export const CSP_REFUSALS: Record<CspRefusal, string> = {
  notAnOrigin: 'not an origin',
  wildcardOverPublicSuffix: 'a wildcard over a public suffix (every site under it)',
  noRegistrableDomain: 'no registrable domain (a public suffix alone)',
  localAddress: 'a loopback, private or link-local address, and the server is not on loopback',
  wildcardOverAddress: 'a wildcard over an IP address',
  ipv6: 'an IPv6 address, which a CSP source cannot name',
};

export interface CheckOptions {
  /**
   * Whether loopback, private and link-local origins may be taken: only for an app whose server is
   * itself reached over HTTP on loopback (a stdio server is a local process, but what it declares
   * is still a stranger's choice, so it gets the same rule as a remote one).
   */
  localAllowed: boolean;
}

/** Why `source` is refused, or undefined when it may be taken. */
export function refusalOf(source: string, options: CheckOptions): CspRefusal | undefined {
  const m = SOURCE.exec(source);
  if (!m) return 'notAnOrigin';
  const wildcard = m[2] !== undefined;
  const host = m[3].toLowerCase();
  if (m[4] !== undefined && m[4] !== '*' && Number(m[4]) > 65535) return 'notAnOrigin';
  if (host.startsWith('[')) return isLocalAddress(host) && !options.localAllowed ? 'localAddress' : 'ipv6';
  const labels = host.split('.');
  if (/^(\d+|0x[0-9a-f]*)$/.test(labels[labels.length - 1])) {
    // A numeric last label is an address (no top-level domain is numeric): dotted-quad only, no `127.1` or `0x7f.1`.
    if (labels.length !== 4 || !labels.every((l) => /^\d{1,3}$/.test(l) && Number(l) <= 255)) return 'notAnOrigin';
    if (wildcard) return 'wildcardOverAddress';
    return isLocalAddress(host) && !options.localAllowed ? 'localAddress' : undefined;
  }
  if (isLocalAddress(host) || LOCAL_NAMES.test(host)) return options.localAllowed ? undefined : 'localAddress';
  if (isPublicSuffix(host)) return wildcard ? 'wildcardOverPublicSuffix' : 'noRegistrableDomain';
  return undefined;
}

export interface CheckedCsp {
  connect: string[];
  resource: string[];
  frame: string[];
  baseUri: string[];
  /** What was asked for but not taken, and why, for the log and the panel. */
  dropped: Array<{ source: string; refusal: CspRefusal }>;
}

/** The app's declared domains, each checked; what is not a concrete origin it may reach is dropped. */
export function checkCsp(csp: AppCsp, options: CheckOptions): CheckedCsp {
  const dropped: CheckedCsp['dropped'] = [];
  const take = (list: string[] | undefined) =>
    (list ?? []).filter((source) => {
      const refusal = refusalOf(source, options);
      if (refusal) dropped.push({ source, refusal });
      return !refusal;
    });
  return {
    connect: take(csp.connectDomains),
    resource: take(csp.resourceDomains),
    frame: take(csp.frameDomains),
    baseUri: take(csp.baseUriDomains),
    dropped,
  };
}

/**
 * Whether an app of this server may name loopback, private and link-local origins: only a server
 * reached over HTTP on loopback, whose app may well talk to the same machine it came from.
 */
export function localOriginsAllowed(server: { type: 'stdio' } | { type: 'http'; url: string }): boolean {
  return server.type === 'http' && isLoopbackUrl(server.url);
}

/** Every origin the app may reach, once each, for the panel's header. */
export function allowedOrigins(csp: CheckedCsp): string[] {
  return [...new Set([...csp.connect, ...csp.resource, ...csp.frame, ...csp.baseUri])];
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
