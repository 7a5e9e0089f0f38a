/**
 * Summarises the profiles test/bench/start-profile.cjs wrote (docs/performance.md#start-up):
 *   npx tsx test/bench/start-profile-summary.ts <dir> [<top>] [<function name>…]
 * Per start, averaged over the profiles in <dir>: CPU time at the frame, the functions with the
 * most self time, and the inclusive time of each named function (every frame of it on a sample's
 * stack counts once per sample).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const [dir, topArg, ...names] = process.argv.slice(2);
if (!dir) throw new Error('usage: start-profile-summary.ts <dir> [<top>] [<function name>…]');
const top = Number(topArg ?? 40);
const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
const self = new Map<string, number>();
const inclusive = new Map<string, number>(names.map((n) => [n, 0]));
let cpu = 0;
let wall = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  cpu += (JSON.parse(readFileSync(join(dir, file.replace('.cpuprofile', '.json')), 'utf8')) as { cpuMs: number }).cpuMs;
  wall += (profile.endTime - profile.startTime) / 1000;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\//, '')}:${n.callFrame.lineNumber + 1}`;
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    let node = byId.get(profile.samples[i]!)!;
    self.set(key(node), (self.get(key(node)) ?? 0) + ms);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      node = byId.get(id)!;
      const name = node.callFrame.functionName;
      if (inclusive.has(name) && !seen.has(name)) {
        seen.add(name);
        inclusive.set(name, inclusive.get(name)! + ms);
      }
    }
  }
}
const n = files.length;
console.log(`${n} profiles; per start: CPU at the frame ${(cpu / n).toFixed(1)} ms, profiled ${(wall / n).toFixed(1)} ms`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(v / n).toFixed(2).padStart(8)}  ${k}`);
if (names.length) console.log('inclusive:');
for (const [k, v] of inclusive) console.log(`${(v / n).toFixed(2).padStart(8)}  ${k}`);

// The call tree, top-down, averaged per start: every node of at least LEGION_TREE_MS (default 1) ms, to LEGION_TREE_DEPTH (default 12) levels.
const minMs = Number(process.env.LEGION_TREE_MS ?? 1);
const maxDepth = Number(process.env.LEGION_TREE_DEPTH ?? 12);
interface Tree { total: number; children: Map<string, Tree> }
const root: Tree = { total: 0, children: new Map() };
for (const file of files) {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const stack: string[] = [];
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      stack.push(`${f.functionName || '(anonymous)'}:${f.lineNumber + 1}`);
    }
    stack.reverse();
    let t = root;
    t.total += ms;
    for (const name of stack.slice(1)) {
      let c = t.children.get(name);
      if (!c) t.children.set(name, (c = { total: 0, children: new Map() }));
      c.total += ms;
      t = c;
    }
  }
}
const print = (t: Tree, depth: number) => {
  if (depth >= maxDepth) return;
  for (const [name, c] of [...t.children].sort((a, b) => b[1].total - a[1].total)) {
    if (c.total / n < minMs) continue;
    console.log(`${' '.repeat(depth * 2)}${(c.total / n).toFixed(1)} ${name}`);
    print(c, depth + 1);
  }
};
console.log('tree:');
print(root, 0);
