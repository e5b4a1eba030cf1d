/**
 * Server text in the Markdown documents we open is data: it never becomes a link that acts and
 * never looks like a line of ours.
 *
 * The editor finds links in a document two ways, and both must come up empty for server text:
 * the Markdown extension parses `[x](command:…)`, `<command:…>` and `<a href="command:…">`
 * (everywhere except code blocks), and the editor's own link detection finds bare `http://`,
 * `https://` and `file://` anywhere, code blocks included. So every piece of server text is put
 * in a code block (or escaped, where it is one line inside ours), and every URI scheme in it is
 * broken with a zero-width space between the scheme name and its colon: the text reads the same,
 * but no parser sees a scheme there.
 */

/** U+200B: invisible, and not a character a URI scheme may contain. */
export const LINK_BREAK = '\u200B';

/**
 * A scheme name followed by a colon (or an HTML entity for one, which Markdown decodes) and
 * something that is not white space: `command:x`, `file:///`, `javascript&#58;`. "Note: x" is
 * left alone.
 */
const SCHEME = /([A-Za-z][A-Za-z0-9+.-]*)(:|&#0*58;?|&#[xX]0*3[aA];?|&colon;)(?=\S)/g;

/** Breaks every URI scheme in `text`, so no link detector sees one. */
export function neutraliseLinks(text: string): string {
  return text.replace(SCHEME, `$1${LINK_BREAK}$2`);
}

/**
 * Characters that take no room where they are shown, so that a name holding one looks like another
 * (`look\u200Bup` like `lookup`) or text holds what nobody sees: zero-width spaces, joiners and
 * non-joiners, direction marks, embeddings, overrides and isolates, word joiners and invisible
 * operators, the soft hyphen, fillers, variation selectors, tag characters, the byte order mark.
 * Emoji keep theirs: a joiner between two pictographs, a presentation selector after one.
 */
export const INVISIBLE_CHARACTERS =
  // eslint-disable-next-line no-misleading-character-class -- combining marks and selectors are matched one by one on purpose: each is shown
  /(?<!\p{Extended_Pictographic}\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})|(?<!\p{Extended_Pictographic})[\uFE0E\uFE0F]|[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B\u200C\u200E\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0D\uFEFF\uFFA0\uFFF9-\uFFFB\u{1D173}-\u{1D17A}\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

/** A character as its code point between angle brackets: `<U+200B>`. */
export function codePointLabel(char: string): string {
  return `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * Control characters other than tab and line feed shown as their Unicode pictures (␛, ␈): a
 * bare carriage return or U+2028 would otherwise start a line the editor shows on its own. With
 * `invisible`, every character of `INVISIBLE_CHARACTERS` is shown too, as `<U+200B>`: what a
 * person must be able to read exactly (a name in a question or a refusal).
 */
export function visibleControls(text: string, invisible = false): string {
  const shown = text
    .replace(/\r\n?/g, '\n')
    // eslint-disable-next-line no-control-regex -- control characters are what this replaces
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => String.fromCharCode(c === '\u007f' ? 0x2421 : 0x2400 + c.charCodeAt(0)))
    .replace(/[\u0085\u2028\u2029]/g, '\u2424');
  return invisible ? shown.replace(INVISIBLE_CHARACTERS, codePointLabel) : shown;
}

function longestRun(text: string, char: '`' | '~'): number {
  let longest = 0;
  for (const m of text.matchAll(char === '`' ? /`+/g : /~+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/** A fence that nothing inside `body` can close: longer than its longest backtick and tilde runs. */
export function fenceFor(body: string): string {
  return '`'.repeat(Math.max(3, longestRun(body, '`') + 1, longestRun(body, '~') + 1));
}

/** Text of ours or of the person's (arguments) in a code block that it cannot close. */
export function fenced(text: string, info = 'text'): string {
  const body = neutraliseLinks(visibleControls(text));
  const fence = fenceFor(body);
  return `${fence}${info}\n${body}\n${fence}`;
}

/**
 * Server text as a quoted code block: every line of it starts with `> `, so in the source editor
 * no line of the server's can look like one of our headings or verdicts (which never start with
 * `>`), and in the preview it is a code block, never Markdown that renders links or HTML.
 */
export function quoted(text: string, info = 'text'): string {
  return fenced(text, info)
    .split('\n')
    .map((line) => (line ? `> ${line}` : '>'))
    .join('\n');
}

/** Characters that start Markdown inline syntax (links, autolinks, HTML, emphasis, code, entities). */
const INLINE_SYNTAX = /[\\`*_[\]<>~|&]/g;

/**
 * Server text placed inside a line of ours (a name, a MIME type, a description): one line,
 * Markdown syntax escaped, schemes broken, and cut at `max` characters.
 */
export function inline(text: string, max = 500): string {
  const oneLine = visibleControls(text).replace(/[\n\t]+/g, ' ');
  const cut = oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
  return neutraliseLinks(cut.replace(INLINE_SYNTAX, '\\$&'));
}

/** A link of ours whose label is server text: `[label](target)` with the label escaped. */
export function linkTo(label: string, target: string): string {
  return `[${inline(label, 200) || '…'}](${target.replace(/[()\s<>]/g, encodeURIComponent)})`;
}
