import { neutraliseLinks, visibleControls } from './serverText';

declare const shown: unique symbol;

/**
 * Text that may be put in front of the person in a notification, a status bar item, a quick pick
 * or a tooltip: either server text that went through {@link forDisplay}, or a message of ours
 * built by {@link fromTemplate} from such parts. The brand exists only in the type system, so a
 * plain string (a server's error message, a tool's description, a state message holding an HTTP
 * body or a stderr tail) does not compile where the editor layer's helpers expect ShownText.
 * VS Code notifications turn `[x](command:…)` into a link that runs a command; shown text never
 * has one.
 */
export type ShownText = string & { readonly [shown]: true };

/** What the host knows to be secret, replaced with `***` (`McpHost.redact`). */
export type Redact = (text: string) => string;

/**
 * For text that holds no value the host keeps secret and is shown where no redactor is at hand:
 * a server's name from the settings, a host name, an input's id. Its links are still broken.
 */
export const nothingToRedact: Redact = (text) => text;

/** Longer server text is cut: a notification or a picker row is not where an HTTP body is read. */
export const SHOWN_MAX = 1000;

/**
 * The one way server text becomes ShownText: secrets redacted first (a secret split by what
 * follows would no longer match), control characters and invisible ones (zero-width, bidirectional
 * overrides and isolates, tags: ./serverText.ts) made visible, cut at `max` characters, and every
 * URI scheme broken (`command:` is never a link).
 */
export function forDisplay(text: string, redact: Redact, max = SHOWN_MAX): ShownText {
  const visible = visibleControls(redact(text));
  const cut = visible.length > max ? `${visible.slice(0, max)}…` : visible;
  return neutraliseLinks(cut) as ShownText;
}

/**
 * A message of ours: `template` is our own text (in the editor layer, a translated
 * `vscode.l10n.t('…')` without arguments, which the lint rule checks), and each `{n}` in it is
 * replaced, in one pass, by `parts[n]`: shown text or a number, never a raw string.
 */
export function fromTemplate(template: string, ...parts: ReadonlyArray<ShownText | number>): ShownText {
  return template.replace(/\{(\d+)\}/g, (placeholder, n: string) => {
    const part = parts[Number(n)];
    return part === undefined ? placeholder : String(part);
  }) as ShownText;
}

/** Shown texts (or numbers) side by side, such as a picker's "read-only · destructive"; empty ones left out. */
export function joinShown(
  parts: ReadonlyArray<ShownText | number | undefined>,
  separator: ' · ' | ', ' | ': ' | '\n' | ' ' | ' › ' | ' | ' | ' — ',
): ShownText {
  return parts.filter((p) => p !== undefined && p !== '').join(separator) as ShownText;
}

/** A codicon of ours before shown text (`$(edit) Edit…`); a name that is not a codicon's is left out. */
export function withIcon(icon: string, text: ShownText): ShownText {
  return (/^[a-z0-9-]+(~spin)?$/.test(icon) ? `$(${icon}) ${text}` : text) as ShownText;
}
