// Check the import graph against .dependency-cruiser.cjs (docs/architecture.md): no cycle, no
// import from a lower layer to a higher one. Usage:
//   node scripts/check-architecture.mjs [--json] [--root <dir>] [paths...]   (default: src components bin)
// Exit 0 when clean, 1 with one line per violation.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const json = args.includes('--json');
const rootAt = args.indexOf('--root');
const root = rootAt === -1 ? process.cwd() : resolve(args[rootAt + 1]);
const paths = args.filter((a, i) => !a.startsWith('--') && i !== rootAt + 1);
const repo = resolve(new URL('..', import.meta.url).pathname);
const require = createRequire(import.meta.url);

// dependency-cruiser 17 (the last line that runs on Node 20) parses TypeScript with the
// `typescript` package's JS API (absent from TypeScript 7, which this project uses) or with
// swc, but it does not switch on swc's `tsx` option for .tsx files (version 18 does, on
// Node 22). Turn it on for .tsx/.jsx names before dependency-cruiser loads swc: it imports
// this very module object.
const swc = require('@swc/core');
const parseFileSync = swc.parseFileSync.bind(swc);
swc.parseFileSync = (file, options) => parseFileSync(file, /\.[jt]sx$/.test(file) ? { ...options, tsx: true } : options);

const rules = require(resolve(repo, '.dependency-cruiser.cjs'));
const { cruise } = await import('dependency-cruiser');
process.chdir(root);
const { output } = await cruise(paths.length > 0 ? paths : ['src', 'components', 'bin'].filter((p) => existsSync(p)), {
  ...rules.options,
  validate: true,
  ruleSet: { forbidden: rules.forbidden },
});
const { violations, totalCruised, totalDependenciesCruised } = output.summary;
const name = (step) => (typeof step === 'string' ? step : step.name);
if (json) {
  process.stdout.write(`${JSON.stringify({ modules: totalCruised, dependencies: totalDependenciesCruised, violations: violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to, ...(v.cycle ? { cycle: v.cycle.map(name) } : {}) })) })}\n`);
} else {
  for (const v of violations) {
    process.stdout.write(`${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (cycle: ${v.cycle.map(name).join(' → ')})` : ''}\n`);
  }
  process.stdout.write(`${violations.length} violation(s) in ${totalCruised} modules, ${totalDependenciesCruised} imports\n`);
}
process.exitCode = violations.length > 0 ? 1 : 0;
