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

import { invisibleMarked } from '../scan/invisible';

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
 * Control characters other than tab and line feed shown as their Unicode pictures (␛, ␈): a
 * bare carriage return or U+2028 would otherwise start a line the editor shows on its own.
 * Invisible characters (zero-width, bidirectional controls, tag characters, ANSI escapes) are
 * marked first (`<U+200B>`, `<tags: …>`, ../scan/invisible.ts): the person sees what a model would read.
 */
export function visibleControls(text: string): string {
  return (
    invisibleMarked(text, { escapes: 'kept' })
      .replace(/\r\n?/g, '\n')
      // eslint-disable-next-line no-control-regex -- control characters are what this replaces
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => String.fromCharCode(c === '\u007f' ? 0x2421 : 0x2400 + c.charCodeAt(0)))
      .replace(/[\u0085\u2028\u2029]/g, '\u2424')
  );
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
