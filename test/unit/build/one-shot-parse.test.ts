import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultConfigFiles, loadConfig } from '../../../src/config/load';
import { defaultRuleFiles, loadRuleFiles } from '../../../src/authz/rules/load';
import { defaultPricingFiles, loadPricing } from '../../../src/providers/pricing';
import { loadFauxScript } from '../../../src/providers/faux-script';
import { TRUSTED } from '../../../src/storage/workspace-trust';
import { readTrustRegistry, registerTrusted, trustRegistryFile } from '../../../src/storage/trust-registry';

/**
 * What a start parses once (the shipped config, rules, prices and demo script) is parsed
 * without zod's JIT (ONE_SHOT, src/storage/zod-validate.ts): zod would compile each object
 * schema's fast path with `new Function`, code that V8's code cache never holds and that costs
 * more than the parse itself (docs/performance.md#start-up). Counted here: every function zod
 * compiles goes through the global `Function`.
 */
test('start-up parses: the shipped config, rules, prices, demo script and the trust registry compile no zod fast path', async () => {
  const RealFunction = globalThis.Function;
  const compiled: string[] = [];
  globalThis.Function = new Proxy(RealFunction, {
    construct(target, args: string[]) {
      const body = String(args[args.length - 1] ?? '');
      if (body.includes('payload')) compiled.push(body.slice(0, 80));
      return Reflect.construct(target, args) as object;
    },
  });
  const home = mkdtempSync(join(tmpdir(), 'legion-one-shot-'));
  try {
    const appDir = resolve('.');
    const config = await loadConfig(defaultConfigFiles(appDir, home, home, TRUSTED));
    assert.ok(config.ok, config.ok ? '' : config.error);
    const rules = await loadRuleFiles(defaultRuleFiles(appDir, home, {}, TRUSTED));
    assert.ok(rules.ok, rules.ok ? '' : rules.error);
    const pricing = await loadPricing(defaultPricingFiles(appDir, home, home, TRUSTED));
    assert.ok(pricing.ok, pricing.ok ? '' : pricing.error);
    const faux = await loadFauxScript(join(appDir, 'config', 'demo-script.yaml'));
    assert.ok(faux.ok, faux.ok ? '' : faux.error);
    // Every start in a trusted workspace reads the trust registry (storage/workspace-trust.ts).
    const registry = trustRegistryFile(home);
    mkdirSync(join(home, '.legion'));
    assert.ok(registerTrusted(registry, home).ok);
    const read = readTrustRegistry(registry);
    assert.ok(read.ok && read.registry.workspaces.length === 1, read.ok ? '' : read.error);
  } finally {
    globalThis.Function = RealFunction;
    rmSync(home, { recursive: true, force: true });
  }
  assert.deepEqual(compiled, [], 'zod compiled fast paths');
});
