// Lists every value (function, class, constant, enum) that a file under src/ exports but no other file (in src/,
// test/ or bench/) imports: an export is a promise to other files, so one that nobody
// takes should be a local. Exits 1 when it finds any. Runs in `npm run lint`.
// Types are left alone: exporting one costs nothing at run time. The package's public
// entry (src/index.ts, src/index.cts) is used by the package's users.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return /\.(ts|cts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
const files = ['src', 'test', 'bench'].flatMap((d) => walk(join(root, d)));
const sourceOf = (path) => ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
const resolveSpecifier = (from, spec) => {
  const abs = resolve(dirname(from), spec).replace(/\.(js|cjs|mjs)$/, '');
  for (const ext of ['.ts', '.cts', '.mts', '/index.ts']) if (files.includes(abs + ext)) return abs + ext;
  return undefined;
};

/** file -> names exported by it (declared there, not re-exported). */
const exported = new Map();
/** file -> names other files import from it; '*' when a namespace import takes them all. */
const used = new Map();
const use = (file, name) => {
  if (!used.has(file)) used.set(file, new Set());
  used.get(file).add(name);
};
const hasExport = (node) => ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export;

for (const file of files) {
  const sf = sourceOf(file);
  const names = [];
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) || (ts.isExportDeclaration(st) && st.moduleSpecifier)) {
      const spec = st.moduleSpecifier.text;
      if (!spec.startsWith('.')) continue;
      const target = resolveSpecifier(file, spec);
      if (!target) continue;
      if (ts.isImportDeclaration(st)) {
        const clause = st.importClause;
        if (!clause) continue;
        if (clause.name) use(target, 'default');
        const b = clause.namedBindings;
        if (b && ts.isNamespaceImport(b)) use(target, '*');
        if (b && ts.isNamedImports(b)) for (const el of b.elements) use(target, (el.propertyName ?? el.name).text);
      } else if (!st.exportClause) use(target, '*');
      else if (ts.isNamedExports(st.exportClause))
        for (const el of st.exportClause.elements) use(target, (el.propertyName ?? el.name).text);
      continue;
    }
    if (!hasExport(st) || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) continue;
    if (ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) names.push(d.name.getText(sf));
    else if (st.name) names.push(st.name.text);
  }
  // import('./x.js') anywhere: the whole module.
  const text = sf.text;
  for (const m of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    const target = resolveSpecifier(file, m[1]);
    if (target) use(target, '*');
  }
  const isEntry = /src\/index\.c?ts$/.test(file);
  if (file.startsWith(`${join(root, 'src')}/`) && !isEntry) exported.set(file, names);
}

const unused = [];
for (const [file, names] of exported) {
  const takers = used.get(file) ?? new Set();
  if (takers.has('*')) continue;
  for (const name of names) if (!takers.has(name)) unused.push(`${relative(root, file)}: ${name}`);
}
if (unused.length) {
  console.error(`${unused.length} exported name(s) that no other file imports (make them local, or delete them):`);
  for (const line of unused) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`exports: every exported name of ${exported.size} files under src/ has a user in another file`);
