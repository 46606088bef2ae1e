/**
 * Which Chromium the console tests drive, chosen here for scripts/preflight.mjs and
 * test/console/browser.ts alike, so the run's notes and the tests agree:
 *
 * 1. REDRIVE_TEST_CHROMIUM, when set: a path to a Chromium or Chrome, or `npm` for the
 *    npm-shipped one alone.
 * 2. Debian's /usr/bin/chromium, when present (.ci/run installs it).
 * 3. The npm-shipped Chromium: @sparticuz/chromium, a devDependency that carries a
 *    brotli-compressed Chromium for Linux x64 with the NSS, NSPR and expat libraries it
 *    loads. It is unpacked once into node_modules/.cache and used if it launches.
 *
 * No browser is ever downloaded. When none serves, the console tests skip as the
 * `chromium` group (scripts/skip-groups.mjs), or fail under CI=true.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(join(root, 'package.json'));
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const NPM_PACKAGE = '@sparticuz/chromium';

/** The folder of the installed @sparticuz/chromium and its version, or undefined if it is not installed. */
function npmPackage() {
  try {
    const main = require.resolve(NPM_PACKAGE); // build/cjs/index.cjs
    const dir = join(dirname(main), '..', '..');
    return { dir, version: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version };
  } catch {
    return undefined;
  }
}

/** Where the npm-shipped Chromium is unpacked: the project's node_modules/.cache, else the temporary folder. */
function cacheDir(version) {
  const name = `redrive-chromium-${version}`;
  const cache = join(root, 'node_modules', '.cache');
  try {
    mkdirSync(cache, { recursive: true });
    return join(cache, name);
  } catch {
    return join(tmpdir(), `${name}-${process.getuid?.() ?? 'user'}`);
  }
}

/**
 * Unpacks the package's Chromium, fonts, SwiftShader and shared libraries (al2023/lib) into `dir`. The
 * package unpacks into the temporary folder, so a child process does it with TMPDIR set to
 * a staging folder beside `dir`, renamed into place when complete: test files that start
 * side by side never see half a browser, and the one that loses the race drops its copy.
 */
function unpack(pkg, dir) {
  const staging = mkdtempSync(`${dir}.staging-`);
  const script = `
    import chromium from ${JSON.stringify(NPM_PACKAGE)};
    import { inflate } from ${JSON.stringify(pathToFileURL(join(pkg.dir, 'build/esm/lambdafs.js')).href)};
    await chromium.executablePath();
    await inflate(${JSON.stringify(join(pkg.dir, 'bin/al2023.tar.br'))});
  `;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: root, env: { ...process.env, TMPDIR: staging } },
      (error, _stdout, stderr) => {
        if (error) {
          rmSync(staging, { recursive: true, force: true });
          reject(new Error(`unpacking ${NPM_PACKAGE} failed: ${stderr.trim() || error.message}`));
          return;
        }
        try {
          renameSync(staging, dir);
        } catch (e) {
          rmSync(staging, { recursive: true, force: true });
          if (!existsSync(join(dir, 'chromium'))) {
            reject(e);
            return;
          }
        }
        resolve();
      },
    );
  });
}

/** The switches every launch gets: no sandbox (tests may run as root), nothing that phones home. */
export const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches `browser` (a choice below) with playwright-core, opens a page and closes it; rejects if that fails. */
async function tryLaunch(browser) {
  const { chromium } = await import('playwright-core');
  const b = await chromium.launch({
    executablePath: browser.executablePath,
    env: browser.env,
    headless: true,
    args: LAUNCH_ARGS,
    timeout: 60_000,
  });
  try {
    const page = await b.newPage();
    await page.setContent('<p>ok</p>');
    if ((await page.textContent('p')) !== 'ok') throw new Error('a page did not render');
  } finally {
    await b.close();
  }
}

/**
 * The npm-shipped Chromium, unpacked and launched once (a file beside it records that it
 * did), or a reason it cannot serve here.
 */
async function npmChromium(env) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return {
      missing: `the npm-shipped Chromium (${NPM_PACKAGE}) is built for Linux x64 only, not ${process.platform} ${process.arch}`,
    };
  }
  const pkg = npmPackage();
  if (!pkg) return { missing: `${NPM_PACKAGE} is not installed (npm ci installs it)` };
  const dir = cacheDir(pkg.version);
  const browser = {
    name: `the npm-shipped Chromium (${NPM_PACKAGE} ${pkg.version}, unpacked in ${dir})`,
    executablePath: join(dir, 'chromium'),
    // Its own NSS, NSPR and expat first: a machine without Debian's Chromium may lack them.
    env: { ...env, LD_LIBRARY_PATH: [join(dir, 'al2023', 'lib'), env.LD_LIBRARY_PATH].filter(Boolean).join(':') },
  };
  const launched = join(dir, 'launched');
  if (existsSync(launched)) return browser;
  try {
    if (!existsSync(browser.executablePath)) await unpack(pkg, dir);
    await tryLaunch(browser);
  } catch (e) {
    return {
      missing: `the npm-shipped Chromium (${NPM_PACKAGE} ${pkg.version}) does not start here: ${String(e.message ?? e).split('\n')[0]}`,
    };
  }
  writeFileSync(launched, `${new Date().toISOString()}\n`);
  return browser;
}

/**
 * The Chromium to drive: `{ name, executablePath, env? }`, or `{ missing }` saying why
 * there is none (the caller skips or, under CI=true, fails).
 */
export async function chooseBrowser(env = process.env) {
  const chosen = env.REDRIVE_TEST_CHROMIUM;
  if (chosen === 'npm') return npmChromium(env);
  if (chosen)
    return existsSync(chosen)
      ? { name: `Chromium at ${chosen}`, executablePath: chosen }
      : { missing: `Chromium at ${chosen}: not found` };
  if (existsSync(DEBIAN_CHROMIUM)) return { name: `Chromium at ${DEBIAN_CHROMIUM}`, executablePath: DEBIAN_CHROMIUM };
  const npm = await npmChromium(env);
  return npm.missing ? { missing: `Chromium at ${DEBIAN_CHROMIUM}: not found, and ${npm.missing}` } : npm;
}
