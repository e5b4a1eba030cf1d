import { strict as assert } from 'node:assert';
import { forDisplay, fromTemplate, joinShown, LINK_BREAK, Redactor, type ShownText } from '../../src/core';
import { visibleControls } from '../../src/core/render/serverText';
import { invisibleRuns } from '../../src/core/scan/invisible';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import type { SetupUi } from '../../src/vscode/ui/setupUi';
import type * as Notifications from '../../src/vscode/window/notifications';
import type * as QuickPicks from '../../src/vscode/window/quickPicks';
import type { showStatusMessage } from '../../src/vscode/window/statusBar';

// Compiled by `npm run typecheck`, never called: each @ts-expect-error line must stay an error, so
// a raw string (a server's error message, a tool's description) never compiles where the person
// reads it. Type-only imports: nothing of VS Code loads here.
export function typeChecks(
  raw: string,
  ui: HostUi,
  setup: SetupUi,
  window: typeof Notifications,
  picks: typeof QuickPicks,
  status: typeof showStatusMessage,
): void {
  // @ts-expect-error a plain string is not ShownText
  const plain: ShownText = raw;
  // @ts-expect-error the error reporter's notifications take ShownText
  void ui.notify('error', raw);
  // @ts-expect-error so does the way a tool call's ending is told
  void ui.announceCall('error', raw);
  // @ts-expect-error and Add Server's "could not start"
  void setup.notify('error', raw);
  // @ts-expect-error and every other notification
  void window.notify('info', raw);
  const question = forDisplay(raw, (t) => t);
  // @ts-expect-error and a modal's detail
  void window.askModal('warning', question, raw);
  // @ts-expect-error a picker's rows (a tool's name, a completion the server suggests)
  void picks.pickOne([{ label: raw }], {});
  // @ts-expect-error and its placeholder
  void picks.pickOne([], { placeHolder: raw });
  // @ts-expect-error and the status bar
  status(raw);
  // @ts-expect-error a template's parts are shown text or numbers, never raw strings
  const filled = fromTemplate('MCP Host: {0}', raw);
  void ui.notify(
    'error',
    fromTemplate(
      'MCP Host: {0}',
      forDisplay(raw, (t) => t),
    ),
  );
  void [plain, filled];
}

describe('shown text: what notifications, pickers and tooltips may show (render/shownText.ts)', () => {
  const secrets = new Redactor();
  secrets.add('hunter2-token-value');
  const redact = (text: string) => secrets.redact(text);

  it('breaks a command link and redacts a secret in server text', () => {
    const shown = forDisplay('start failed: [x](command:workbench.action.terminal.new) with token hunter2-token-value', redact);
    assert.equal(shown, `start failed: [x](command${LINK_BREAK}:workbench.action.terminal.new) with token ***`);
    assert.doesNotMatch(shown, /command:/);
    assert.doesNotMatch(shown, /hunter2/);
  });

  it('redacts before it breaks links, so a secret that looks like a URI is still found', () => {
    secrets.add('https://user:pw@secret.example');
    assert.equal(forDisplay('see https://user:pw@secret.example now', redact), 'see *** now');
  });

  it('makes control and bidirectional characters visible, and cuts long text', () => {
    assert.equal(forDisplay('a\rb\u001b[31mc\u202ed', redact), 'a\nb\u241b[31mc<U+202E>d');
    const long = forDisplay('x'.repeat(5000), redact);
    assert.equal(long.length, 1001);
    assert.ok(long.endsWith('…'));
    assert.equal(forDisplay('abcdef', redact, 3), 'abc…');
  });

  it('shows invisible characters by their code point, so a name that holds one does not pass for another; emoji stay whole', () => {
    assert.equal(forDisplay('look\u200bup', redact), 'look<U+200B>up');
    assert.equal(forDisplay('a\u2066b\u00adc\ufeffd\u{E0041}e\u2060f', redact), 'a<U+2066>b<U+00AD>c<U+FEFF>d<tags: A>e<U+2060>f');
    assert.equal(forDisplay('a\u034fb\u3164c\ufe00d\u180be\u{1D173}f', redact), 'a<U+034F>b<U+3164>c<U+FE00>d<U+180B>e<U+1D173>f');
    assert.equal(forDisplay('x\u200dy\ufe0f', redact), 'x<U+200D>y<U+FE0F>');
    for (const emoji of ['👨\u200d👩\u200d👧', '❤\ufe0f', '🏳\ufe0f\u200d🌈']) assert.equal(forDisplay(emoji, redact), emoji);
    // The same function, for text that is not a display string (the CLI's refusals).
    assert.equal(visibleControls('look\u200bup\r'), 'look<U+200B>up\n');
    assert.deepEqual(
      invisibleRuns('a\u200bb\u200cc').map((r) => r.text),
      ['\u200b', '\u200c'],
    );
  });

  it('fills our templates in one pass: a part that holds "{1}" stays as it is', () => {
    const part = forDisplay('tool {1} [x](file:///etc/passwd)', redact);
    assert.equal(fromTemplate('{0} failed: {1}', part, 3), `tool {1} [x](file${LINK_BREAK}:///etc/passwd) failed: 3`);
    assert.equal(fromTemplate('{0} and {1}', part), `${part} and {1}`);
  });

  it('joins shown parts and leaves empty ones out', () => {
    assert.equal(joinShown([forDisplay('a', redact), undefined, forDisplay('', redact), 2], ' · '), 'a · 2');
  });
});
