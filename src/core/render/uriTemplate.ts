/**
 * The variables of an RFC 6570 URI template and its expansion, for the operators MCP servers
 * use: simple `{var}`, reserved `{+var}`, fragment `{#var}`, label `{.var}`, path `{/var}`,
 * query `{?a,b}` and continuation `{&a}`. Explode and prefix modifiers are honoured where they
 * apply to single strings.
 */
const EXPRESSION = /\{([+#./;?&]?)([^}]+)\}/g;

export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(EXPRESSION)) {
    for (const spec of m[2].split(',')) {
      const name = spec.replace(/[*]$|:\d+$/, '').trim();
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

const unreserved = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const reserved = (s: string) => encodeURI(s).replace(/%5B/g, '[').replace(/%5D/g, ']');

export function expandTemplate(template: string, values: Record<string, string>): string {
  return template.replace(EXPRESSION, (_all, op: string, list: string) => {
    const specs = list.split(',').map((s) => s.trim());
    const parts: string[] = [];
    for (const spec of specs) {
      const prefix = /:(\d+)$/.exec(spec);
      const name = spec.replace(/[*]$|:\d+$/, '');
      let value = values[name];
      if (value === undefined) continue;
      if (prefix) value = value.slice(0, Number(prefix[1]));
      const enc = op === '+' || op === '#' ? reserved(value) : unreserved(value);
      parts.push(op === '?' || op === '&' || op === ';' ? `${name}=${enc}` : enc);
    }
    if (parts.length === 0) return '';
    switch (op) {
      case '':
      case '+':
        return parts.join(',');
      case '#':
        return `#${parts.join(',')}`;
      case '.':
        return `.${parts.join('.')}`;
      case '/':
        return `/${parts.join('/')}`;
      case ';':
        return `;${parts.join(';')}`;
      case '?':
        return `?${parts.join('&')}`;
      case '&':
        return `&${parts.join('&')}`;
      default:
        return parts.join(',');
    }
  });
}
