// package.json's localised strings: `%key%` placeholders that VS Code replaces with the text of
// package.nls.json (English) or package.nls.<locale>.json. Used by scripts/manifest.js to put the
// settings schemas' descriptions into package.nls.json, and by tests to read the manifest as
// VS Code shows it.

/** Keywords of a JSON schema whose string value a person reads in settings IntelliSense. */
const TEXT = new Set(['title', 'description', 'markdownDescription', 'deprecationMessage', 'markdownDeprecationMessage', 'errorMessage']);
/** Keywords whose value is a list of texts, one per `enum` member. */
const TEXT_LISTS = new Set(['enumDescriptions', 'markdownEnumDescriptions']);
/** Keywords whose value is one schema, or a list of schemas. */
const SCHEMA = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else']);
const SCHEMA_LISTS = new Set(['oneOf', 'anyOf', 'allOf']);

/**
 * A copy of `schema` with every text a person reads replaced by `%key%`; the English text of
 * each key goes into `texts`. Keys follow the schema's shape (`properties` left out, a `oneOf`
 * member named by its `type` const); a text met again reuses its first key.
 */
function localizeSchema(schema, prefix, texts) {
  const keyFor = (path, text) => {
    const known = Object.keys(texts).find((k) => k.startsWith(`${prefix}.`) && texts[k] === text);
    if (known) return `%${known}%`;
    const key = [prefix, ...path].join('.');
    if (key in texts) throw new Error(`package.nls.json: two texts for ${key}`);
    texts[key] = text;
    return `%${key}%`;
  };
  const walk = (node, path) => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
    const out = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (TEXT.has(keyword) && typeof value === 'string') out[keyword] = keyFor([...path, keyword], value);
      else if (TEXT_LISTS.has(keyword) && Array.isArray(value))
        out[keyword] = value.map((text, i) => keyFor([...path, keyword, String(node.enum?.[i] ?? i)], text));
      else if (keyword === 'properties')
        out[keyword] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, walk(sub, [...path, name])]));
      else if (SCHEMA.has(keyword)) out[keyword] = walk(value, [...path, keyword === 'additionalProperties' ? 'entry' : keyword]);
      else if (SCHEMA_LISTS.has(keyword))
        out[keyword] = value.map((sub, i) => walk(sub, [...path, String(sub?.properties?.type?.const ?? i)]));
      else if (keyword === 'defaultSnippets') {
        out[keyword] = value.map((snippet, i) => ({
          ...snippet,
          ...(snippet.label !== undefined ? { label: keyFor([...path, 'snippet', String(i), 'label'], snippet.label) } : {}),
          ...(snippet.description !== undefined
            ? { description: keyFor([...path, 'snippet', String(i), 'description'], snippet.description) }
            : {}),
        }));
      } else out[keyword] = value;
    }
    return out;
  };
  return walk(schema, []);
}

/** `value` with every `%key%` string replaced by its text in `texts`, as VS Code does; unknown keys stay. */
function resolveNls(value, texts) {
  if (typeof value === 'string') {
    const m = /^%(.+)%$/.exec(value);
    return m && m[1] in texts ? texts[m[1]] : value;
  }
  if (Array.isArray(value)) return value.map((v) => resolveNls(v, texts));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveNls(v, texts)]));
  return value;
}

/** Every `%key%` used anywhere in `value`. */
function nlsKeys(value, found = new Set()) {
  if (typeof value === 'string') {
    const m = /^%(.+)%$/.exec(value);
    if (m) found.add(m[1]);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) nlsKeys(v, found);
  }
  return found;
}

module.exports = { localizeSchema, resolveNls, nlsKeys };
