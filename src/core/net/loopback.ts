/**
 * Whether a URL names this machine's loopback: `localhost`, `::1` or an address of 127.0.0.0/8,
 * written as such (a name that resolves there does not count). Plain http is let through for
 * OAuth only there, and an app may name local origins only when its server is reached there.
 */
export function isLoopbackUrl(url: URL | string): boolean {
  let host: string;
  try {
    host = (typeof url === 'string' ? new URL(url) : url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
