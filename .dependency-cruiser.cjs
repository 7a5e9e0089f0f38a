// The layers of Legion and the rules that keep imports one way (docs/architecture.md).
// Checked by test/unit/architecture.test.ts (part of `npm test`) with dependency-cruiser.
// Order matters: a module may import its own layer and the layers before it, never one after.

/** src/ areas, lowest first. `errors` is src/errors.ts. */
const SRC_LAYERS = ['errors', 'model', 'storage', 'config', 'events', 'providers', 'tools', 'context', 'session', 'collective', 'authz', 'conventions', 'checkpoints', 'worktrees', 'workflows', 'runtime', 'serve', 'remote', 'engine', 'cli'];

/** src/runtime/ files by tier, lowest first: the turn reads top to bottom (core → scheduler → turn → phases → delegation → state). */
const RUNTIME_TIERS = [
  ['turn', 'call-state', 'run-state', 'journal', 'open-calls', 'format', 'resume-plan', 'ports', 'env', 'core-api', 'usage-book', 'ledger-seq'],
  ['approval-route', 'approver-turn', 'delegation', 'user-questions', 'agent-approval', 'merge-request'],
  ['prescan', 'resume-prepass', 'approval-phase', 'execute-phase', 'parallel', 'stream', 'context-hook', 'budget-gate'],
  ['agent-loop'],
  ['scheduler', 'turn-parts'],
  ['commands', 'restart'],
  ['core'],
];

const area = (names) => `^src/(${names.join('|')})(/|\\.ts$)`;
const runtimeFile = (names) => `^src/runtime/(${names.join('|')})\\.ts$`;

const layerRules = SRC_LAYERS.slice(0, -1).map((name, i) => ({
  name: `layer-${name}`,
  comment: `src/${name} sits below ${SRC_LAYERS.slice(i + 1).join(', ')}: it must not import them`,
  severity: 'error',
  from: { path: area([name]) },
  to: { path: area(SRC_LAYERS.slice(i + 1)) },
}));

const runtimeRules = RUNTIME_TIERS.slice(0, -1).map((names, i) => ({
  name: `runtime-tier-${i}`,
  comment: `src/runtime/{${names.join(',')}} sit below ${RUNTIME_TIERS.slice(i + 1).flat().join(', ')}: pass a function in instead of importing up`,
  severity: 'error',
  from: { path: runtimeFile(names) },
  to: { path: runtimeFile(RUNTIME_TIERS.slice(i + 1).flat()) },
}));

module.exports = {
  SRC_LAYERS,
  RUNTIME_TIERS,
  forbidden: [
    { name: 'no-cycle', comment: 'no import cycle (type-only imports included)', severity: 'error', from: {}, to: { circular: true } },
    ...layerRules,
    ...runtimeRules,
    {
      name: 'src-not-ui',
      comment: 'src/ is the headless core: it never imports components/ or the entry',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(components|bin)/' },
    },
    {
      name: 'ui-through-core-interface',
      comment: 'components/ reach the core only through its command interface (src/runtime/core-api.ts); the CLI composes the run and hands it over',
      severity: 'error',
      from: { path: '^components/' },
      to: { path: ['^src/cli/', '^src/runtime/(?!core-api\\.ts$)', '^bin/'] },
    },
    {
      name: 'ui-not-on-disk',
      comment: 'components/ never read runs, sessions or files of .legion/ themselves: everything comes through the core interface (src/runtime/core-api.ts), which an attached front end reaches over the socket (docs/serve.md#history)',
      severity: 'error',
      from: { path: '^components/' },
      to: { path: ['^src/storage/', '^src/session/'] },
    },
    {
      name: 'runtime-file-without-tier',
      comment: 'every runtime file has a tier: add a new one to RUNTIME_TIERS',
      severity: 'error',
      from: { path: '^src/runtime/', pathNot: runtimeFile(RUNTIME_TIERS.flat()) },
      to: {},
    },
    {
      name: 'runtime-file-without-tier',
      comment: 'every runtime file has a tier: add a new one to RUNTIME_TIERS',
      severity: 'error',
      from: {},
      to: { path: '^src/runtime/', pathNot: runtimeFile(RUNTIME_TIERS.flat()) },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.mjs', '.js', '.json'] },
  },
};
