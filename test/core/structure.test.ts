import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ESLint } from 'eslint';
import madge from 'madge';
import ts from 'typescript';

/**
 * The rules of the code's shape that the tools enforce (docs/development.md, "The core's boundary"): src/core never imports
 * 'vscode', and the import graphs of src/core and src/vscode have no cycle, neither between files nor between folders.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const CORE = path.join(ROOT, 'src', 'core');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * Type-checks files with src/core's compiler options, in one tsc run. They sit in a scratch folder inside the
 * repository, where 'vscode' resolves to node_modules/@types/vscode as it would for a file in src/core.
 * Returns tsc's output lines for each file.
 */
function checkAsCore(sources: Record<string, string>): { status: number | null; output: string; errors: (name: string) => string[] } {
  const dir = fs.mkdtempSync(path.join(ROOT, '.core-probe-'));
  try {
    for (const [name, source] of Object.entries(sources)) fs.writeFileSync(path.join(dir, `${name}.ts`), source);
    const tsconfig = {
      extends: path.relative(dir, path.join(CORE, 'tsconfig.json')),
      include: [],
      files: Object.keys(sources).map((n) => `${n}.ts`),
    };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const run = spawnSync(process.execPath, [TSC, '--noEmit', '--pretty', 'false', '-p', dir], { encoding: 'utf8', timeout: 60_000 });
    const output = run.stdout + run.stderr;
    return { status: run.status, output, errors: (name) => output.split('\n').filter((l) => l.includes(`${name}.ts(`)) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The cycles between folders in madge's file graph: an edge A -> B when a file in folder A imports one in folder B
 * (files outside the scanned folder, such as src/core seen from src/vscode, are left out). With `rootIsAFolder`, the files
 * at the top of the scanned folder form a folder of their own, `(root)`, so a subfolder that imports a top file which
 * imports that subfolder is a cycle too.
 */
function folderCycles(files: Record<string, string[]>, rootIsAFolder: boolean): string[] {
  const folder = (file: string) => {
    if (file.startsWith('../')) return undefined;
    if (file.includes('/')) return file.slice(0, file.indexOf('/'));
    return rootIsAFolder ? '(root)' : undefined;
  };
  const edges = new Map<string, Set<string>>();
  for (const [from, deps] of Object.entries(files)) {
    for (const to of deps) {
      const a = folder(from);
      const b = folder(to);
      if (a && b && a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
    }
  }
  const cycles: string[] = [];
  const visit = (node: string, trail: string[]) => {
    for (const next of edges.get(node) ?? []) {
      if (next === trail[0]) cycles.push([...trail, next].join(' -> '));
      else if (!trail.includes(next) && next > trail[0]) visit(next, [...trail, next]);
    }
  };
  for (const start of edges.keys()) visit(start, [start]);
  return cycles;
}

describe('code structure: rules the tools enforce', function () {
  this.timeout(120_000);

  it("a 'vscode' import in src/core fails its type-check, a type-only one too", function () {
    const probes = {
      typeOnly: "import type * as vscode from 'vscode';\nexport type U = vscode.Uri;\n",
      value: "import { Uri } from 'vscode';\nexport const u = Uri.parse('x:y');\n",
      reexport: "export { window } from 'vscode';\n",
      dynamic: "export const load = () => import('vscode');\n",
    };
    // The control: in the same run, a file that imports only Node passes.
    const result = checkAsCore({ ...probes, control: "import type { Readable } from 'node:stream';\nexport type R = Readable;\n" });
    assert.notEqual(result.status, 0, result.output);
    assert.deepEqual(result.errors('control'), [], result.output);
    for (const name of Object.keys(probes)) {
      const errors = result.errors(name);
      assert.equal(errors.length, 1, `tsc -p src/core accepted ${name}: ${result.output}`);
      assert.match(errors[0], /error TS2306: File '.*no-vscode\.d\.ts' is not a module/);
    }
  });

  it("the linter rejects a 'vscode' import in src/core, even a side-effect import the compiler lets through", async function () {
    // Our eslint.config.mjs, without type information (the probes are not on disk) and only the rule at stake.
    const eslint = new ESLint({
      cwd: ROOT,
      overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
      ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
    });
    const lint = async (file: string, code: string) => (await eslint.lintText(code, { filePath: path.join(ROOT, file) }))[0].messages;
    for (const code of ["import 'vscode';\n", "import type * as vscode from 'vscode';\nexport type U = vscode.Uri;\n"]) {
      const messages = await lint('src/core/probe.ts', code);
      assert.ok(
        messages.some((m) => m.ruleId === 'no-restricted-imports'),
        `no no-restricted-imports for ${JSON.stringify(code)}: ${JSON.stringify(messages)}`,
      );
    }
    // The editor layer may import it; vscode-jsonrpc is not 'vscode'.
    assert.deepEqual(
      (await lint('src/vscode/probe.ts', "import type * as vscode from 'vscode';\nexport type U = vscode.Uri;\n")).filter(
        (m) => m.ruleId === 'no-restricted-imports',
      ),
      [],
    );
    assert.deepEqual(
      (await lint('src/core/probe.ts', "import type { Message } from 'vscode-jsonrpc/node';\nexport type M = Message;\n")).filter(
        (m) => m.ruleId === 'no-restricted-imports',
      ),
      [],
    );
  });

  it('src/vscode has no import cycle between files or between its folders (its top files included), type-only imports included', async function () {
    const graph = await madge(path.join(ROOT, 'src', 'vscode'), { fileExtensions: ['ts'], tsConfig: path.join(ROOT, 'tsconfig.json') });
    assert.deepEqual(graph.circular(), [], 'files that import each other (npx madge --circular --extensions ts src/vscode)');
    const files = graph.obj();
    assert.ok(Object.keys(files).length > 40, `madge saw only ${Object.keys(files).length} files`);
    assert.ok(files['policy/consent.ts'].includes('ui/hostUi.ts'), 'madge does not see type-only imports');
    // The window's answers are wired in one place: no part of the editor layer imports them.
    const importers = Object.entries(files).filter(([, deps]) => deps.includes('windowUi.ts'));
    assert.deepEqual(importers, [], 'only src/extension.ts may import windowUi.ts');
    // The top files (commands.ts, windowUi.ts, api.ts) wire the folders together: no folder imports them.
    assert.deepEqual(folderCycles(files, true), [], 'folders of src/vscode that import each other, (root) being its top files');
  });

  it('src/core has no import cycle between files or between its folders', async function () {
    const graph = await madge(CORE, { fileExtensions: ['ts'], tsConfig: path.join(CORE, 'tsconfig.json') });
    assert.deepEqual(graph.circular(), [], 'files that import each other (npx madge --circular --extensions ts src/core)');
    const files = graph.obj();
    assert.ok(Object.keys(files).length > 30, `madge saw only ${Object.keys(files).length} files`);
    assert.ok(files['client/client.ts'].includes('jsonrpc/connection.ts'), 'madge does not see the imports');

    assert.deepEqual(folderCycles(files, false), [], 'folders of src/core that import each other');
  });
});

/** The requests only the gate sends: McpClient's methods that test/core/structure.test.ts keeps inside src/core/policy and src/core/client. */
const GATED_METHODS = ['callTool', 'readResource', 'getPrompt', 'subscribeResource', 'complete'];

/**
 * Every use in `src` of the McpClient methods that send a gated request, and of `ServerHandle.rawClient`, found by the type checker
 * (so a cast, a `Pick<McpClient, …>`, a bound or stored method is found as well as a plain call;
 * another class's `callTool` is not). Returns `file:line method` relative to the repository.
 */
function rawGatedUses(root: string): string[] {
  const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const files = parsed.fileNames.filter((f) => path.relative(root, f).split(path.sep)[0] === 'src');
  const program = ts.createProgram(files, parsed.options);
  const checker = program.getTypeChecker();
  const clientFile = path.join(root, 'src', 'core', 'client', 'client.ts');
  const handleFile = path.join(root, 'src', 'core', 'servers', 'handle.ts');
  // The handle's whole client: reading it is the first step to a raw send.
  const isRawClientGetter = (declaration: ts.Declaration): boolean =>
    ts.isGetAccessorDeclaration(declaration) &&
    path.resolve(declaration.getSourceFile().fileName) === handleFile &&
    declaration.name.getText() === 'rawClient';
  const isGatedMethod = (declaration: ts.Declaration): boolean =>
    ts.isMethodDeclaration(declaration) &&
    path.resolve(declaration.getSourceFile().fileName) === clientFile &&
    ts.isClassDeclaration(declaration.parent) &&
    declaration.parent.name?.text === 'McpClient' &&
    GATED_METHODS.includes(declaration.name.getText());
  const uses: string[] = [];
  for (const source of program.getSourceFiles()) {
    const file = path.relative(root, source.fileName);
    if (file.startsWith('..') || file.split(path.sep)[0] !== 'src') continue;
    const visit = (node: ts.Node): void => {
      const names = [...GATED_METHODS, 'rawClient'];
      if (ts.isIdentifier(node) && names.includes(node.text) && !(node.parent && ts.isMethodDeclaration(node.parent))) {
        const symbol = checker.getSymbolAtLocation(node);
        if (symbol?.declarations?.some((d) => isGatedMethod(d) || isRawClientGetter(d))) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          uses.push(`${file.split(path.sep).join('/')}:${line + 1} ${node.text}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return uses;
}

describe('code structure: the gate is the only way to send', function () {
  this.timeout(180_000);

  it('no file outside src/core/policy and src/core/client sends tools/call, resources/read, prompts/get, resources/subscribe or completion/complete on the raw client', function () {
    const uses = rawGatedUses(ROOT);
    // The control: the conformance client (the one named exception) calls the raw client, and the scan sees it.
    assert.ok(
      uses.some((u) => u.startsWith('src/cli/conformance.ts:')),
      `the scan does not see src/cli/conformance.ts's call: ${uses.join('\n')}`,
    );
    const outside = uses.filter(
      (u) =>
        !u.startsWith('src/core/policy/') &&
        !u.startsWith('src/core/client/') &&
        !u.startsWith('src/cli/conformance.ts:') &&
        // The handle reads its own whole client, to subscribe again and to unsubscribe (never through `client`, which lacks them).
        !/^src\/core\/servers\/handle\.ts:\d+ rawClient$/.test(u),
    );
    assert.deepEqual(outside, [], 'send these through a GatedServer (src/core/policy/gated.ts)');
  });
});
