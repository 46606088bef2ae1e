/**
 * A real Chromium for the console tests, never downloaded: which one (Debian's, the
 * npm-shipped @sparticuz/chromium, or REDRIVE_TEST_CHROMIUM) is chosen once per test file
 * by scripts/test-browser.mjs, as scripts/preflight.mjs chooses it for the run's notes.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess, type ServerProcessOptions } from '../support/server-process.js';
import { skipReason } from '../support/requirements.js';

type Choice =
  | { name: string; executablePath: string; env?: Record<string, string> }
  | { missing: string; name?: undefined };
// The scripts' own choice, from the checkout (tests run compiled, from dist/test/).
const chooser = fileURLToPath(new URL('../../../scripts/test-browser.mjs', import.meta.url));
const { chooseBrowser, LAUNCH_ARGS } = (await import(pathToFileURL(chooser).href)) as {
  chooseBrowser(): Promise<Choice>;
  LAUNCH_ARGS: string[];
};
const choice = await chooseBrowser();

/**
 * Why the browser tests cannot run here, or undefined if they can. In CI a missing
 * browser is a failure, not a skip.
 */
export function browserMissing(): string | undefined {
  if (choice.name !== undefined) return undefined;
  if (process.env.CI === 'true')
    throw new Error(`${choice.missing}, and CI=true: the console's browser tests must run in CI`);
  return skipReason('chromium', choice.missing);
}

/** `extraArgs`: more Chromium switches, e.g. `--host-resolver-rules=...` to give a name to 127.0.0.1. */
export function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  if (choice.name === undefined) throw new Error(choice.missing);
  return chromium.launch({
    executablePath: choice.executablePath,
    env: choice.env,
    headless: true,
    args: [...LAUNCH_ARGS, ...extraArgs],
  });
}

/** Opens a console page and waits until its script has filled it in. */
export async function openPage(page: Page, url: string): Promise<void> {
  // The page a test leaves may still navigate on its own (the console reloads a list 600 ms
  // after an action), which aborts this navigation: go again, it is ours that must win.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.goto(url);
      break;
    } catch (e) {
      if (attempt >= 3 || !/ERR_ABORTED|interrupted by another navigation/.test(String(e))) throw e;
    }
  }
  await page.waitForSelector('body[data-ready="true"]');
}

// The committed screenshots are refreshed on request (REDRIVE_SCREENSHOTS=docs), so an
// ordinary test run leaves the checkout as it was; otherwise they go to a temporary folder
// of the user's own (another user's would refuse the writes).
const IMAGES =
  process.env.REDRIVE_SCREENSHOTS === 'docs'
    ? fileURLToPath(new URL('../../../docs/images/', import.meta.url))
    : join(tmpdir(), `redrive-console-screenshots-${process.getuid?.() ?? 'user'}/`);

/** Saves a screenshot for docs/console.md. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: `${IMAGES}${name}.png`, fullPage: false });
}

/** Collects uncaught page errors, so a test can assert the console threw none. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/** Waits briefly (the log line may follow the "listening" one by a few ms) for a line of the server's log. */
export async function logMatch(output: () => string, re: RegExp): Promise<string> {
  const until = Date.now() + 3_000;
  while (!re.test(output()) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  return output();
}

/** What useConsole starts for a test file; each is there once its `before` has run. */
export interface ConsoleRun {
  server(): ServerProcess;
  page(): Page;
  /** An AWS SDK client of the server. */
  sqs(): SQSClient;
  /** The page's uncaught errors so far (pageErrors). */
  errors(): string[];
}

/**
 * For a test file: a server (on the memory store unless `server` says otherwise) and a page
 * of a real Chromium (of `viewport`'s size, else Playwright's default), started before its
 * tests and stopped after them; nothing when the browser is missing (`skip`). `seed`, in
 * the same hook, fills the server in before the browser starts: a `before` of the test
 * file's own is not ordered after this one.
 */
export function useConsole(
  skip: string | undefined,
  opts: {
    server?: ServerProcessOptions;
    viewport?: { width: number; height: number };
    seed?: (sqs: SQSClient) => Promise<void>;
  } = {},
): ConsoleRun {
  let server: ServerProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let sqs: SQSClient | undefined;
  let errors: string[] = [];
  before(async () => {
    if (skip) return;
    server = await startServerProcess(opts.server ?? { storage: 'memory' });
    sqs = server.client();
    await opts.seed?.(sqs);
    browser = await launchBrowser();
    page = await browser.newPage(opts.viewport ? { viewport: opts.viewport } : {});
    errors = pageErrors(page);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    server?.cleanup();
  });
  return { server: () => server!, page: () => page!, sqs: () => sqs!, errors: () => errors };
}
