/**
 * The layout of src/ keeps the architecture of docs/architecture.md: the engine depends
 * on no other folder (it declares the store interfaces, the stores implement them),
 * protocol adapters reach the stores only through the engine, the two SQL stores do not
 * borrow from each other, no module takes part in an import cycle, and files stay short.
 * Every relative import and re-export of every .ts file under src/ counts, `import type`
 * included.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MAX_LINES = 400;

// Compiled to dist/test/: the repository is two levels up.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
if (!existsSync(SRC)) throw new Error(`no src/ at ${SRC}: this test runs compiled, as dist/test/architecture.test.js`);

interface Import {
  /** Repository-relative, with forward slashes: `src/engine/engine.ts`. */
  from: string;
  to: string;
  line: number;
  specifier: string;
  /** `import type …` or `export type … from`: erased by the compiler, so nothing is loaded at run time. */
  typeOnly: boolean;
}

/** `src/a/b.ts` for an absolute path, whatever the platform's separator. */
const repoPath = (abs: string) => relative(ROOT, abs).split(sep).join('/');

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found.sort();
}

/**
 * Static imports and re-exports at the start of a line or after a `;`: `import x from '…'`,
 * `import type { X } from '…'`, `import '…'`, `export { x } from '…'`, `export * from '…'`,
 * written on one line or several. The anchor keeps out examples in comments.
 */
const STATIC = /(?:^|;)[ \t]*(?:import|export)\s+(type\s+)?(?:[\w$*{},\s]*?\s*from\s*)?['"]([^'"\n]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

/** The file a relative specifier names: `./x.js` is `./x.ts` in the sources. */
function target(fromAbs: string, specifier: string): string {
  const abs = resolve(dirname(fromAbs), specifier);
  const ts = abs.replace(/\.js$/, '.ts');
  return existsSync(ts) ? ts : abs;
}

function importsOf(abs: string, text: string): Import[] {
  const found: Import[] = [];
  for (const pattern of [STATIC, DYNAMIC]) {
    for (const m of text.matchAll(pattern)) {
      const specifier = m[pattern === STATIC ? 2 : 1]!;
      if (!specifier.startsWith('.')) continue;
      const at = m.index! + m[0].lastIndexOf(specifier);
      const typeOnly = pattern === STATIC && m[1] !== undefined;
      found.push({
        from: repoPath(abs),
        to: repoPath(target(abs, specifier)),
        line: text.slice(0, at).split('\n').length,
        specifier,
        typeOnly,
      });
    }
  }
  return found;
}

const files = sourceFiles(SRC).map((abs) => ({ path: repoPath(abs), text: readFileSync(abs, 'utf8') }));
const imports = files.flatMap((f) => importsOf(join(ROOT, f.path), f.text));

const under = (path: string, folder: string) => path.startsWith(`${folder}/`);
const show = (i: Import) => `  ${i.from}:${i.line} imports ${i.to} ('${i.specifier}')`;

/** Fails, listing them, if any import is `bad`. */
function assertNoImports(what: string, why: string, bad: (i: Import) => boolean): void {
  const found = imports.filter(bad);
  assert.ok(
    found.length === 0,
    `${what}; ${why}. ${found.length} import(s) break this:\n${found.map(show).join('\n')}`,
  );
}

test('the sources are found, and their relative imports parsed', () => {
  assert.ok(files.length > 20, `expected the TypeScript sources under ${SRC}, found ${files.length} files`);
  assert.ok(imports.length > 20, `expected the relative imports of ${files.length} files, parsed ${imports.length}`);
  const unresolved = imports.filter((i) => !existsSync(join(ROOT, i.to)));
  assert.ok(unresolved.length === 0, `relative imports that name no file:\n${unresolved.map(show).join('\n')}`);
});

test('src/engine imports nothing from any other folder of src/ but the shapes of src/wire', () => {
  assertNoImports(
    'src/engine/ must not import from outside src/engine/, except src/wire',
    'the engine owns the rules and declares the interfaces the stores implement, so it depends on nothing else; src/wire holds the shapes that cross every wall (deaths and their reasons, filters), and imports nothing',
    (i) => under(i.from, 'src/engine') && !under(i.to, 'src/engine') && !under(i.to, 'src/wire'),
  );
});

/**
 * The engine's folders in layers, lowest first. A file may import its own folder and the
 * folders of lower layers, never a folder of its own layer or above: so the walk of any
 * request runs down the layers once (docs/architecture.md draws them). The loose files at
 * the top of src/engine are the composer, the highest layer.
 */
const ENGINE_LAYERS: string[][] = [
  // The vocabulary: the types, the SQS and AMQP errors, the clock, queue names and ARNs.
  ['kernel'],
  // The store port the store adapters implement, and the settings a queue runs with (its
  // attributes over the matching server policy).
  ['store', 'policies'],
  // What every part is handed: the EngineContext (store, clock, settings, report) and the observer port.
  ['context'],
  // Queue records: validation, attributes, access policies, quotas.
  ['queues'],
  // Messages (send, receive, long polls, fair queues), activity counts, AMQP routing.
  ['messages', 'activity', 'routing'],
  // The one road of every dead letter.
  ['dead-letters'],
  // The AMQP broker, move tasks: triggers of dead letters, users of messages.
  ['amqp', 'move-tasks'],
  // The actions of the API, one file per family.
  ['actions'],
  // engine.ts and sweeps.ts wire everything together.
  ['(composer)'],
];

/** The engine folder of a file under src/engine, or '(composer)' for the loose files at its top. */
const engineFolderOf = (path: string) => {
  const parts = path.split('/');
  return parts.length > 3 ? parts[2]! : '(composer)';
};
const layerOf = (folder: string) => ENGINE_LAYERS.findIndex((l) => l.includes(folder));

test("every folder of src/engine has a place in the engine's layers", () => {
  const folders = [...new Set(files.filter((f) => under(f.path, 'src/engine')).map((f) => engineFolderOf(f.path)))];
  assert.deepEqual(
    folders.filter((f) => layerOf(f) < 0).sort(),
    [],
    'a new folder under src/engine needs its place in ENGINE_LAYERS (test/architecture.test.ts)',
  );
});

test("src/engine's folders import only their own folder and lower layers", () => {
  assertNoImports(
    'a folder of src/engine may import only its own files and the folders of lower layers (ENGINE_LAYERS)',
    'the layers run one way, so a request walks down them once and a change in a low layer is seen by all above it, never the reverse',
    (i) => {
      if (!under(i.from, 'src/engine') || !under(i.to, 'src/engine')) return false;
      const from = engineFolderOf(i.from);
      const to = engineFolderOf(i.to);
      return from !== to && layerOf(to) >= layerOf(from);
    },
  );
});

test('src/protocols imports nothing from src/stores', () => {
  assertNoImports(
    'src/protocols/ must not import from src/stores/',
    'a protocol adapter only translates the wire format and reaches the stores through the engine',
    (i) => under(i.from, 'src/protocols') && under(i.to, 'src/stores'),
  );
});

test('src/metrics imports nothing from src/stores, src/server or src/console', () => {
  assertNoImports(
    'src/metrics/ must not import from src/stores/, src/server/ or src/console/',
    'metrics read the engine (its observer port, the store interfaces); the server wires them, so they know no store and no server',
    (i) => under(i.from, 'src/metrics') && ['src/stores', 'src/server', 'src/console'].some((f) => under(i.to, f)),
  );
});

test('src/stores/postgres imports nothing from src/stores/sqlite', () => {
  assertNoImports(
    'src/stores/postgres/ must not import from src/stores/sqlite/',
    'what both SQL stores share belongs in src/stores/ (or the engine), not in one of them',
    (i) => under(i.from, 'src/stores/postgres') && under(i.to, 'src/stores/sqlite'),
  );
});

/** Strongly connected components of the import graph that hold a cycle (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** A shortest cycle through `start` inside `component`, as its files in import order. */
function shortestCycle(graph: Map<string, string[]>, component: string[], start: string): string[] {
  const inside = new Set(component);
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return path;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** The shortest cycle through each file of the component, each listed once, as `a → b → a`. */
function cyclesThrough(graph: Map<string, string[]>, component: string[]): string[] {
  const seen = new Set<string>();
  for (const file of component) {
    const cycle = shortestCycle(graph, component, file);
    const first = cycle.indexOf([...cycle].sort()[0]!);
    const rotated = [...cycle.slice(first), ...cycle.slice(0, first)];
    seen.add([...rotated, rotated[0]].join(' → '));
  }
  return [...seen].sort();
}

test('no import cycle in src/', () => {
  const graph = new Map<string, string[]>(files.map((f) => [f.path, []]));
  for (const i of imports) if (graph.has(i.to) && !graph.get(i.from)!.includes(i.to)) graph.get(i.from)!.push(i.to);
  const found = cycles(graph);
  const report = found.map((c, n) =>
    [
      `  ${n + 1}. ${c.length === 1 ? 'a file imports itself' : `${c.length} files import each other in a circle`}: ${c.join(', ')}`,
      '     the shortest cycle through each of them:',
      ...cyclesThrough(graph, c).map((cycle) => `       ${cycle}`),
    ].join('\n'),
  );
  assert.ok(
    found.length === 0,
    `src/ must have no import cycle (type-only imports count); ${found.length} group(s) of files in cycles:\n${report.join('\n')}`,
  );
});

/**
 * The folders of src/ and which others each may import, the direction of every arrow of
 * docs/architecture.md. A folder is a node as a whole (the engine's subfolders are the
 * engine); `index` is the package's entry files at the top of src/. The table holds the
 * arrows that exist, so a new one is a decision made here, with its reason.
 */
const ALLOWED: Record<string, string[]> = {
  // The rules of queue behaviour; it declares the ports (store, observer) others implement,
  // and takes from src/wire the shapes every wall shares (deaths, reasons, filters).
  engine: ['wire'],
  // The store adapters implement the engine's Store interface with its types.
  stores: ['engine'],
  // Who a caller is: the credentials, SigV4, the user name and password sign-in, the
  // console's sessions and the throttle of failed sign-ins every interface shares. Below
  // every interface that checks a secret, so each of them may import it; it reads the
  // engine's errors, region names and quotas, and no protocol (a signature is checked on
  // the request's parts, which the protocols' WireRequest carries).
  auth: ['engine'],
  // The wire protocols decode requests into the engine's actions and encode its answers;
  // AMQP signs in with auth's password check and throttle.
  protocols: ['engine', 'auth'],
  // The shapes that cross walls (Redrive's extension actions as clients read them, deaths
  // and their reasons, the management API's answers), and the pure helpers the console
  // and the CLI both show them with. It imports nothing: everyone else may import it, the
  // browser included.
  wire: [],
  // Prometheus counters on the engine's observer, served over the protocols' HTTP request
  // shape; who may scrape is checked with auth's failed-authentication throttle.
  metrics: ['engine', 'protocols', 'auth'],
  // The console's routes hand its API calls to the JSON protocol adapter (which runs the
  // engine's actions) once auth has signed the session in; its pages read answers as the
  // wire types.
  console: ['engine', 'protocols', 'wire', 'auth'],
  // The HTTP front mounts everything that serves: the protocols, the console, /metrics,
  // and opens the store the engine runs on; it checks SigV4 and basic auth with auth, and
  // its management API answers in the wire's shapes.
  server: ['engine', 'stores', 'protocols', 'metrics', 'console', 'wire', 'auth'],
  // The redrive command: `serve` starts the server, `backup` copies the SQLite store, the
  // client commands read answers as the wire types (and a few engine names and limits).
  cli: ['engine', 'stores', 'protocols', 'server', 'wire'],
  // startRedrive maps its options onto the server's config and starts it.
  library: ['engine', 'server'],
  // The package's entry points: the library's API and the engine's public types.
  index: ['engine', 'library'],
};

/** The folder node of a file: `src/engine/actions/x.ts` is `engine`, `src/index.ts` is `index`. */
const folderOf = (path: string) => {
  const parts = path.split('/');
  return parts.length > 2 ? parts[1]! : 'index';
};

const crossFolder = imports.filter((i) => under(i.to, 'src') && folderOf(i.from) !== folderOf(i.to));

test('every folder of src/ is in the table of allowed folder imports', () => {
  const folders = [...new Set(files.map((f) => folderOf(f.path)))].sort();
  assert.deepEqual(
    folders,
    Object.keys(ALLOWED).sort(),
    'a new folder under src/ needs its row in ALLOWED, with the reason for each arrow',
  );
});

test('each folder of src/ imports only the folders its row allows', () => {
  assertNoImports(
    'a folder of src/ may import only the folders ALLOWED lists for it',
    'each arrow of the folder graph is a decision documented in ALLOWED (test/architecture.test.ts)',
    (i) => crossFolder.includes(i) && !ALLOWED[folderOf(i.from)]!.includes(folderOf(i.to)),
  );
  const used = new Set(crossFolder.map((i) => `${folderOf(i.from)} → ${folderOf(i.to)}`));
  const unused = Object.entries(ALLOWED)
    .flatMap(([from, tos]) => tos.map((to) => `${from} → ${to}`))
    .filter((arrow) => !used.has(arrow));
  assert.deepEqual(unused, [], 'ALLOWED lists only arrows that exist: remove the ones no import uses any more');
});

test('no import cycle between the folders of src/', () => {
  const graph = new Map<string, string[]>(Object.keys(ALLOWED).map((f) => [f, []]));
  for (const i of crossFolder) {
    const from = graph.get(folderOf(i.from))!;
    if (!from.includes(folderOf(i.to))) from.push(folderOf(i.to));
  }
  const found = cycles(graph);
  const report = found.map((c) =>
    [
      ...cyclesThrough(graph, c).map((cycle) => `  ${cycle}`),
      '  through these imports:',
      ...crossFolder.filter((i) => c.includes(folderOf(i.from)) && c.includes(folderOf(i.to))).map(show),
    ].join('\n'),
  );
  assert.ok(found.length === 0, `the folders of src/ must not import each other in a circle:\n${report.join('\n')}`);
});

test('src/wire imports no other folder, and no Node module', () => {
  // The console's browser scripts load src/wire as it is compiled (src/console/assets.ts).
  assertNoImports(
    'src/wire/ may not import from another folder of src/',
    'every folder may import the shapes, the browser included, so the shapes depend on nothing',
    (i) => under(i.from, 'src/wire') && !under(i.to, 'src/wire'),
  );
  const node = files.filter(
    (f) => under(f.path, 'src/wire') && /\bfrom\s*['"]node:|\bimport\(\s*['"]node:/.test(f.text),
  );
  assert.deepEqual(
    node.map((f) => f.path),
    [],
    'src/wire runs in the browser too, which has no node: modules',
  );
});

test("the console's browser scripts load only browser/ and src/wire at run time", () => {
  assertNoImports(
    'src/console/browser/ may import other folders only with `import type`, except src/wire',
    'the page loads the scripts of src/console/browser and src/wire from the server (src/console/assets.ts), nothing else',
    (i) =>
      under(i.from, 'src/console/browser') &&
      !i.typeOnly &&
      !under(i.to, 'src/console/browser') &&
      !under(i.to, 'src/wire'),
  );
});

test(`no file in src/ is over ${MAX_LINES} lines`, () => {
  const long = files
    .map((f) => ({
      path: f.path,
      lines: f.text.endsWith('\n') ? f.text.split('\n').length - 1 : f.text.split('\n').length,
    }))
    .filter((f) => f.lines > MAX_LINES);
  assert.ok(
    long.length === 0,
    `files stay short: ${long.length} file(s) in src/ are over ${MAX_LINES} lines:\n${long.map((f) => `  ${f.path}: ${f.lines} lines`).join('\n')}`,
  );
});
