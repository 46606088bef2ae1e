/**
 * A stand-in for `curl`, run as `node curl.js <curl arguments>`, for the tests that run a
 * document's curl examples as written (test/e2e/extensions-doc.test.ts) on a machine
 * without curl. It does what curl does with the options the documents use, and refuses
 * any other option rather than guess, so an example it runs is one curl runs the same way:
 *
 * - `-s`/`--silent`, `-S`/`--show-error` (and `-sS`): nothing to change here;
 * - `-H`/`--header 'Name: value'`: a request header;
 * - `-d`/`--data`/`--data-raw <data>`: the body (several joined with `&`, as curl does),
 *   which makes the request a POST with `Content-Type: application/x-www-form-urlencoded`
 *   unless a header says otherwise; `-d @file` (a file's content in curl) is refused;
 * - `-X`/`--request <method>`;
 * - one URL.
 *
 * It writes the response body to stdout and exits 0 whatever the status (curl without
 * `-f`), 7 if it cannot connect (curl's "failed to connect"), 2 for an argument it refuses.
 */
const args = process.argv.slice(2);
const headers = new Headers();
const data: string[] = [];
let method: string | undefined;
let url: string | undefined;

function refuse(why: string): never {
  process.stderr.write(`curl stand-in (test/support/curl.ts): ${why}\n`);
  process.exit(2);
}

for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  const value = () => args[++i] ?? refuse(`${arg} needs a value`);
  if (['-s', '--silent', '-S', '--show-error', '-sS', '-Ss'].includes(arg)) continue;
  if (arg === '-H' || arg === '--header') {
    const header = value();
    const colon = header.indexOf(':');
    if (colon <= 0) refuse(`a header without a name: ${header}`);
    headers.append(header.slice(0, colon).trim(), header.slice(colon + 1).trim());
  } else if (arg === '-d' || arg === '--data' || arg === '--data-raw') {
    const d = value();
    if (d.startsWith('@') && arg !== '--data-raw') refuse(`${arg} @file is not supported`);
    data.push(d);
  } else if (arg === '-X' || arg === '--request') method = value();
  else if (arg.startsWith('-')) refuse(`${arg} is not supported`);
  else if (url) refuse(`a second URL: ${arg}`);
  else url = arg;
}
if (!url) refuse('no URL');
if (data.length > 0 && !headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded');

try {
  const res = await fetch(url, {
    method: method ?? (data.length > 0 ? 'POST' : 'GET'),
    headers,
    body: data.length > 0 ? data.join('&') : undefined,
  });
  process.stdout.write(Buffer.from(await res.arrayBuffer()));
} catch (e) {
  process.stderr.write(`curl stand-in: ${url}: ${(e as Error & { cause?: Error }).cause?.message ?? e}\n`);
  process.exit(7);
}
