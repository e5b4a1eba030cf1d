/**
 * The parts of a `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1) that drive
 * MCP authorization. oauth4webapi parses challenges only from responses it fetched itself; the
 * transport hands us the raw header, so the auth-param grammar of RFC 9110 §11 is read here.
 */
export interface BearerChallenge {
  /** `resource_metadata`: where the protected-resource metadata lives. */
  resourceMetadata?: string;
  /** `scope`, split on spaces. */
  scopes?: string[];
  /** `error`, e.g. `invalid_token` or `insufficient_scope`. */
  error?: string;
  errorDescription?: string;
}

/** The Bearer challenge of a `WWW-Authenticate` value, or undefined when it has none. */
export function parseBearerChallenge(header: string | null | undefined): BearerChallenge | undefined {
  if (!header) return undefined;
  const bearer = parseChallenges(header).find((c) => c.scheme.toLowerCase() === 'bearer');
  if (!bearer) return undefined;
  const p = bearer.params;
  const scope = p.get('scope')?.trim();
  return {
    resourceMetadata: p.get('resource_metadata') || undefined,
    scopes: scope ? scope.split(/\s+/) : undefined,
    error: p.get('error') || undefined,
    errorDescription: p.get('error_description') || undefined,
  };
}

interface Challenge {
  scheme: string;
  params: Map<string, string>;
}

/**
 * Splits a header value into challenges. A challenge is `scheme [token68 | auth-param *(, auth-param)]`,
 * and several challenges are separated by commas, so a new challenge starts at a token that is
 * not followed by `=`.
 */
function parseChallenges(header: string): Challenge[] {
  const challenges: Challenge[] = [];
  let i = 0;
  const n = header.length;
  const skipSpace = () => {
    while (i < n && (header[i] === ' ' || header[i] === '\t')) i++;
  };
  const readToken = () => {
    const start = i;
    while (i < n && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(header[i])) i++;
    return header.slice(start, i);
  };
  const readQuoted = () => {
    let value = '';
    i++; // opening quote
    while (i < n && header[i] !== '"') {
      if (header[i] === '\\' && i + 1 < n) i++;
      value += header[i++];
    }
    i++; // closing quote
    return value;
  };

  let current: Challenge | undefined;
  while (i < n) {
    skipSpace();
    if (header[i] === ',') {
      i++;
      continue;
    }
    const token = readToken();
    if (!token) {
      i++; // not a token character: skip it rather than loop forever
      continue;
    }
    skipSpace();
    if (header[i] === '=' && current) {
      // `name=value` belongs to the current challenge (a token68 ends in '=' but is then followed by
      // a comma or the end, which we do not need to tell apart: MCP challenges never carry token68).
      i++;
      skipSpace();
      const value = header[i] === '"' ? readQuoted() : readToken();
      current.params.set(token.toLowerCase(), value);
    } else {
      current = { scheme: token, params: new Map() };
      challenges.push(current);
    }
  }
  return challenges;
}
