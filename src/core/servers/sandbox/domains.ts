import * as net from 'node:net';

/**
 * `network.allowedDomains` and `deniedDomains` as the proxy reads them. An entry is a host name
 * (`api.example.com`), an IP address (`127.0.0.1`, `::1`) or `*.suffix`, which matches every name
 * *below* the suffix and not the suffix itself (`*.example.com` matches `a.example.com` and
 * `a.b.example.com`, not `example.com`: list both to allow both). Names are compared as the
 * network sees them: lower case, without a trailing dot, international names as punycode.
 */
export interface DomainRules {
  allowed: readonly string[];
  denied: readonly string[];
}

/**
 * A host as one canonical string: a lower-case ASCII name without a trailing dot (punycode for an
 * international name), a dotted IPv4 address, or a bracketed, compressed IPv6 address. Anything
 * else (an empty label, a port, user info, a path, a space, a percent sign) is undefined.
 */
export function canonicalHost(raw: string): string | undefined {
  let host = raw.trim();
  if (host === '' || /[\s/\\?#@%]/.test(host)) return undefined;
  if (net.isIPv6(host)) host = `[${host}]`;
  if (host.includes(':') && !/^\[[0-9a-f:.]+\]$/i.test(host)) return undefined;
  let parsed: string;
  try {
    // The WHATWG parser is what clients use: IDN to punycode, case, and IPv4 forms such as 0x7f.1 or 2130706433.
    parsed = new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
  if (parsed.endsWith('.')) parsed = parsed.slice(0, -1);
  if (parsed === '' || parsed.split('.').some((label) => label === '')) return undefined;
  if (!parsed.startsWith('[') && !/^[a-z0-9_.-]+$/.test(parsed)) return undefined;
  return parsed;
}

/** An IP literal (IPv6 bracketed, as canonicalHost gives it): no wildcard ever matches it. */
export const isAddressLiteral = (host: string) => host.startsWith('[') || net.isIPv4(host);

/** An entry of allowedDomains or deniedDomains, settled; undefined when it is neither a host nor `*.suffix`. */
export function domainPattern(entry: string): string | undefined {
  const wildcard = entry.trim().startsWith('*.');
  const host = canonicalHost(wildcard ? entry.trim().slice(2) : entry);
  if (host === undefined || (wildcard && isAddressLiteral(host))) return undefined;
  return wildcard ? `*.${host}` : host;
}

const matches = (host: string, pattern: string) =>
  pattern.startsWith('*.') ? !isAddressLiteral(host) && host.endsWith(pattern.slice(1)) : host === pattern;

/**
 * What the rules say of a canonical host: `denied` (a denied entry matches it: deny wins), `exact`
 * (an allowed entry is this very host), `wildcard` (only a `*.suffix` entry allows it) or
 * `not-allowed`.
 */
export function judgeHost(host: string, rules: DomainRules): 'denied' | 'exact' | 'wildcard' | 'not-allowed' {
  if (rules.denied.some((p) => matches(host, p))) return 'denied';
  if (rules.allowed.includes(host)) return 'exact';
  if (rules.allowed.some((p) => matches(host, p))) return 'wildcard';
  return 'not-allowed';
}

const SPECIAL = new net.BlockList();
for (const [subnet, prefix] of [
  ['0.0.0.0', 8], // this network, and 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  SPECIAL.addSubnet(subnet, prefix, 'ipv4');
for (const [subnet, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  SPECIAL.addSubnet(subnet, prefix, 'ipv6');

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::, 6to4 2002::), if any. */
function embeddedIPv4(address: string): string | undefined {
  let compressed: string;
  try {
    compressed = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const hex =
    /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed) ??
    /^64:ff9b::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed) ??
    /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(?::|$)/.exec(compressed) ??
    /^::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (!hex) return undefined;
  const [high, low] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Loopback, private, link-local, multicast or otherwise not a public address (an IPv6 one carrying such an IPv4 one too). */
export function isSpecialAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (net.isIPv4(bare)) return SPECIAL.check(bare, 'ipv4');
  if (!net.isIPv6(bare)) return true;
  const v4 = embeddedIPv4(bare);
  return SPECIAL.check(bare, 'ipv6') || (v4 !== undefined && SPECIAL.check(v4, 'ipv4'));
}

/** An address in the host form canonicalHost gives, to compare it with the rules' IP entries. */
export const addressAsHost = (address: string) => (net.isIPv6(address) ? (canonicalHost(address) ?? address) : address);
