/**
 * Characters that could make one log or trace line look like several, or change how the text
 * around them reads: C0 controls but tab (LF, CR, ESC of ANSI sequences…), DEL and C1 controls
 * (NEL, CSI…), the Unicode line and paragraph separators, and the bidirectional overrides and
 * isolates that reorder what is shown.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r' };

/**
 * The text as one line that shows what was sent: LF and CR become `\n` and `\r`, every other
 * unsafe character its `\uXXXX` escape. Applied to JSON text it keeps the JSON valid and equal,
 * because JSON.stringify leaves only the characters past U+007E raw, and `\uXXXX` is a JSON escape.
 * Escaping twice changes nothing more.
 */
export function oneLine(text: string): string {
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(text)) return text;
  return text.replace(UNSAFE, (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
