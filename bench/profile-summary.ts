import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. with
 * BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"): self time per function
 * and the share of time spent idle, so the analysis in docs/performance.md can be redone.
 *   node dist/bench/profile-summary.js FILE.cpuprofile [top=25]
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary FILE.cpuprofile [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfMs = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const ms = (profile.timeDeltas[i] ?? 0) / 1000;
  total += ms;
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = url ? `${relative(process.cwd(), url.replace('file://', ''))}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  selfMs.set(key, (selfMs.get(key) ?? 0) + ms);
});

const idle = selfMs.get('(idle)') ?? 0;
console.log(
  `profile: ${(total / 1000).toFixed(1)} s, idle ${((100 * idle) / total).toFixed(1)}%, busy ${((total - idle) / 1000).toFixed(2)} s`,
);
const top = [...selfMs]
  .filter(([k]) => k !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(topArg ?? 25));
for (const [key, ms] of top) console.log(`${((100 * ms) / (total - idle)).toFixed(1).padStart(5)}% of busy  ${key}`);
