// ESLint, flat config: typescript-eslint's type-checked rules for the TypeScript, ESLint's own for the
// JavaScript, and eslint-config-prettier last so no rule argues with the formatter (`npm run format`).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The files that wrap VS Code's notifications, status bar and pickers in functions that take ShownText. */
const SHOWN_TEXT_HELPERS = [
  'src/vscode/window/notifications.ts',
  'src/vscode/window/quickPicks.ts',
  'src/vscode/window/statusBar.ts',
  'src/vscode/window/windowInputs.ts',
];
const SHOWN_TEXT_RULES = [
  {
    selector: "TSAsExpression > TSTypeReference[typeName.name='ShownText']",
    message: 'Only forDisplay, fromTemplate and joinShown (src/core/render/shownText.ts) make ShownText.',
  },
  {
    selector: "MemberExpression[object.property.name='window'][property.name=/^(show(Error|Warning|Information)Message|withProgress)$/]",
    message:
      'Notify through src/vscode/window/notifications.ts (notify, askModal, withProgressNotification), which takes ShownText: server text must go through forDisplay first.',
  },
  {
    selector: "MemberExpression[object.property.name='window'][property.name=/^(showQuickPick|createQuickPick)$/]",
    message:
      'Pick through src/vscode/window/quickPicks.ts (pickOne, pickSome, createShownQuickPick), whose labels and details are ShownText.',
  },
  {
    selector:
      "MemberExpression[object.property.name='window'][property.name=/^(showInputBox|createInputBox|showSaveDialog|showOpenDialog|showTextDocument)$/]",
    message:
      'Input boxes, file dialogs and editors open through src/vscode/window/windowInputs.ts; a question is asked through HostUi (src/vscode/ui/hostUi.ts), so tests can answer it.',
  },
  {
    selector: "MemberExpression[object.property.name='window'][property.name=/^(createStatusBarItem|setStatusBarMessage)$/]",
    message: 'The status bar is written in src/vscode/window/statusBar.ts (showStatusMessage), which takes ShownText.',
  },
];
/** Every log line passes the redactor: channels are made only in logs.ts, which wraps each in it. */
const OUTPUT_CHANNELS_IN_LOGS = {
  selector: "MemberExpression[property.name='createOutputChannel']",
  message: 'Make channels in src/vscode/logs/logs.ts, which redacts every line (createMainLog, ServerLogs).',
};
/** fromTemplate's template is our own text: a translated `vscode.l10n.t('…')` without arguments; server parts come as ShownText after it. */
const OUR_TEMPLATES_ONLY = {
  selector:
    "CallExpression[callee.name='fromTemplate']:not([arguments.0.type='CallExpression'][arguments.0.callee.property.name='t'][arguments.0.callee.object.property.name='l10n'][arguments.0.arguments.length=1][arguments.0.arguments.0.type='Literal'])",
  message: "fromTemplate takes vscode.l10n.t('…') with no arguments: pass the parts (ShownText) to fromTemplate itself.",
};

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', '.harness/**', '.vscode-test/**', '.bench/**', 'node_modules/**', '.core-probe-*/**'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Turned off, each for a reason:
      // JSON from peers, files and test results is `any` at the edges and checked by Ajv or by the test's assertions.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // `async` without `await` is on purpose: a throw inside becomes a rejection, as callers expect.
      '@typescript-eslint/require-await': 'off',
      // Callbacks in option bags and handler interfaces are declared as methods but never use `this`.
      '@typescript-eslint/unbound-method': 'off',
      // `'endTurn' | … | string` documents the known values of an open set (the spec's own style).
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      // The lazy require of dist/auth.js (src/vscode/host/host.ts) and tests' JSON requires are deliberate.
      '@typescript-eslint/no-require-imports': 'off',
      // Flags String(x) on `unknown` values from peers, where "[object Object]" is an acceptable worst case.
      '@typescript-eslint/no-base-to-string': 'off',
      // Its fixes break the build: some assertions it calls unnecessary drive generic inference (quick-pick items).
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Re-rejecting a caught `unknown` as it came is intended (the caller gets the original error).
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  { files: ['**/*.js', '**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },
  // Playwright tests: mocha's globals, and `document` inside page.evaluate() callbacks, which run in the page.
  { files: ['test/e2e/**/*.js'], languageOptions: { globals: { ...globals.mocha, document: 'readonly' } } },
  {
    // The editor-free core: src/core/tsconfig.json makes a typed import fail; this also catches `import 'vscode'`.
    files: ['src/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'src/core is editor-free: use VS Code only in src/vscode.' }],
          patterns: [{ group: ['vscode/*'], message: 'src/core is editor-free.' }],
        },
      ],
    },
  },
  // What the person sees in notifications, the status bar, pickers and tooltips takes ShownText
  // (src/core/render/shownText.ts): only the helpers below call VS Code's own functions.
  {
    files: ['src/**/*.ts'],
    ignores: [...SHOWN_TEXT_HELPERS, 'src/core/render/shownText.ts'],
    rules: { 'no-restricted-syntax': ['error', ...SHOWN_TEXT_RULES, OUR_TEMPLATES_ONLY, OUTPUT_CHANNELS_IN_LOGS] },
  },
  { files: SHOWN_TEXT_HELPERS, rules: { 'no-restricted-syntax': ['error', OUR_TEMPLATES_ONLY, OUTPUT_CHANNELS_IN_LOGS] } },
  // logs.ts makes the channels (each redacting); it is no helper of the rules above.
  { files: ['src/vscode/logs/logs.ts'], rules: { 'no-restricted-syntax': ['error', ...SHOWN_TEXT_RULES, OUR_TEMPLATES_ONLY] } },
  prettier,
);
