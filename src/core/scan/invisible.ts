/**
 * Characters a person does not see but a model reads: Unicode tag characters (U+E0000–E007F, which
 * spell ASCII text no font draws), zero-width and other format characters, bidirectional controls,
 * the variation selectors beyond emoji use, and ANSI escape sequences (a terminal hides what they
 * wrap). The scanner finds them (./detectors.ts), the chat's results lose them (../gateway/forChat.ts)
 * and every text shown to the person has them marked (../render/serverText.ts `visibleControls`).
 */

/** An ANSI escape sequence: CSI (`ESC [ … final`), OSC (`ESC ] … BEL or ESC \`), or a two-character escape. */
const ANSI = '\\u001b(?:\\[[0-?]*[ -/]*[@-~]|\\][^\\u0007\\u001b]*(?:\\u0007|\\u001b\\\\)|[@-Z\\\\-_])';
/** Unicode tag characters: invisible, and each stands for one ASCII character (U+E0041 is "A"). */
const TAGS = '[\\u{E0000}-\\u{E007F}]';
/**
 * Characters that take no room where they are shown, so that a name holding one looks like another
 * (`look\u200Bup` like `lookup`): zero-width spaces, joiners and non-joiners, direction marks,
 * bidirectional embeddings, overrides and isolates, word joiners and invisible operators, the soft
 * hyphen, the combining grapheme joiner, Hangul and halfwidth fillers, Khmer inherent vowels,
 * Mongolian variation selectors, variation selectors (U+FE00–U+FE0F, and the supplementary ones
 * U+E0100–U+E01EF that can carry bytes), interlinear annotation marks, musical format controls and
 * the byte order mark. Emoji keep theirs: a zero-width joiner between two pictographs (👩‍💻) and a
 * presentation selector after one (❤️) are how emoji are written, and stay.
 */
const FORMAT =
  '[\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF9-\\uFFFB\\u{1D173}-\\u{1D17A}\\u{E0100}-\\u{E01EF}]';

/** One run of invisible characters (an escape sequence, a run of tags, or one format character). */
// eslint-disable-next-line no-misleading-character-class -- the joiner U+200D is one of the characters looked for, on its own
const INVISIBLE_RUN = new RegExp(`${ANSI}|${TAGS}+|${FORMAT}`, 'gu');
/** The same, not global: `test` keeps no position between calls. */
// eslint-disable-next-line no-misleading-character-class -- as above
const ANY_INVISIBLE = new RegExp(INVISIBLE_RUN.source, 'u');

/** A zero-width joiner and the text and emoji presentation selectors are matched like the others; an emoji's own are then let through. */
const EMOJI_PART = /^(?:\u200D|\uFE0E|\uFE0F)$/;

export interface InvisibleRun {
  /** Where it starts in the text (UTF-16 offset). */
  index: number;
  /** The characters themselves. */
  text: string;
  /** What a person should see instead: `<U+200B>`, `<ESC[31m>`, or the ASCII text tags spell, `<tags: read ~/.ssh>`. */
  shown: string;
}

function codePoint(c: string): string {
  return `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** The ASCII a run of tag characters spells (U+E0020–E007E), other tags as their code points. */
function spelled(tags: string): string {
  let out = '';
  for (const c of tags) {
    const cp = c.codePointAt(0)! - 0xe0000;
    out += cp >= 0x20 && cp <= 0x7e ? String.fromCharCode(cp) : codePoint(c);
  }
  return out;
}

function shownAs(run: string): string {
  // eslint-disable-next-line no-control-regex -- the controls inside an escape are what is shown
  if (run.startsWith('\u001b')) return `<ESC${run.slice(1).replace(/[\u0000-\u001f]/g, (c) => codePoint(c))}>`;
  if ((run.codePointAt(0) ?? 0) >= 0xe0000 && (run.codePointAt(0) ?? 0) <= 0xe007f) return `<tags: ${spelled(run)}>`;
  return [...run].map(codePoint).join('');
}

/** Every run of invisible characters in `text`, with what a person should see for it. */
export function invisibleRuns(text: string): InvisibleRun[] {
  const out: InvisibleRun[] = [];
  for (const m of text.matchAll(INVISIBLE_RUN)) {
    if (EMOJI_PART.test(m[0]) && isEmojiPart(text, m.index)) continue;
    out.push({ index: m.index, text: m[0], shown: shownAs(m[0]) });
  }
  return out;
}

/** Whether the joiner or presentation selector at `index` is an emoji's: a joiner between two pictographs, a selector after one. */
function isEmojiPart(text: string, index: number): boolean {
  const before = text.slice(Math.max(0, index - 3), index);
  if (text[index] !== '\u200D') return /\p{Extended_Pictographic}$/u.test(before);
  const after = text.slice(index + 1, index + 3);
  return /\p{Extended_Pictographic}\uFE0F?$/u.test(before) && /^\p{Extended_Pictographic}/u.test(after);
}

/** Whether `text` holds anything invisible (cheap for the usual text that does not). */
export function hasInvisible(text: string): boolean {
  return ANY_INVISIBLE.test(text) && invisibleRuns(text).length > 0;
}

/** `text` without its invisible characters: what a model may read of a server's result. */
export function withoutInvisible(text: string): string {
  if (!hasInvisible(text)) return text;
  return replaceRuns(text, () => '');
}

/**
 * `text` with each invisible run replaced by what a person should see (`<U+200B>`, `<tags: …>`);
 * `escapes: 'kept'` leaves ANSI escapes for the caller, which shows ESC as its own picture (␛[31m).
 */
export function invisibleMarked(text: string, options: { escapes?: 'kept' } = {}): string {
  if (!hasInvisible(text)) return text;
  return replaceRuns(text, (run) => (options.escapes === 'kept' && run.text.startsWith('\u001b') ? run.text : run.shown));
}

function replaceRuns(text: string, by: (run: InvisibleRun) => string): string {
  let out = '';
  let at = 0;
  for (const run of invisibleRuns(text)) {
    out += text.slice(at, run.index) + by(run);
    at = run.index + run.text.length;
  }
  return out + text.slice(at);
}
