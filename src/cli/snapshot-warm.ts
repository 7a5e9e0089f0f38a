// Warming the start's parsers while a V8 start-up snapshot is built (docs/performance.md#the-start-up-snapshot).
import { precompileShippedConfig, validateLayers } from '../config/load';
import type { LegionConfig } from '../config/schema';
import { parseYamlSource, shippedYamlNames, shippedYamlText } from '../config/yaml-source';
import { precompileShippedTemplate } from '../collective/templates';
import { precompileShippedParticipantFile } from '../collective/store';
import { parseRuleSources, precompileShippedRules } from '../authz/rules/load';
import { parseModelsFile, precompileShippedModels } from '../providers/pricing';
import { precompileShippedFauxScript } from '../providers/faux-script';

/**
 * The shipped files every start parses before its first frame, each with the function that
 * parses it there. Each returns whether the text parsed; a shipped file that does not is a
 * broken build.
 */
const PARSERS: readonly { readonly name: string; parse(text: string, file: string): boolean }[] = [
  // Also kept, by its text: a start whose only config layer is this file skips validating it (config/load.ts).
  { name: 'legion.yaml', parse: (text, file) => precompileShippedConfig(text, file) },
  // Also kept, by its text: a start loading the same file skips compiling it (authz/rules/load.ts).
  { name: 'rules.yaml', parse: (text, file) => precompileShippedRules(text, file) && parseRuleSources([{ file, text }]).ok },
  // Also kept, by its text: a start loading the same file skips parsing it (providers/pricing.ts).
  { name: 'models.yaml', parse: (text, file) => parseModelsFile(text, file).ok && precompileShippedModels(text, file) },
  // Kept, by its text, and parsed with schemas not kept: a demo start loading the same file builds no schema of it (providers/faux-script.ts).
  { name: 'demo-script.yaml', parse: (text, file) => precompileShippedFauxScript(text, file) },
];

/**
 * Run once while the bundle is evaluated into a start-up snapshot (bin/legion.ts): parse the
 * shipped files (carried in the bundle, nothing read from the machine) through the functions a
 * start runs on them, and discard the results. V8 keeps the bytecode of functions compiled while
 * a snapshot builds, so a start from it runs them without compiling them first (a start from a
 * snapshot has no code cache). A start still reads the real files; the results kept are the
 * shipped config's validation, the rules' compilation, price table and demo script, used only for a file with exactly that text.
 * Returns the names warmed; throws when a shipped file is missing from the bundle or does not
 * parse (the build then fails).
 */
export function warmStartParsers(textOf: (name: string) => string | undefined = shippedYamlText): string[] {
  const warmed: string[] = [];
  for (const { name, parse } of PARSERS) {
    const text = textOf(name);
    if (text === undefined) throw new Error(`snapshot warm-up: config/${name} is not in the bundle`);
    if (!parse(text, `config/${name}`)) throw new Error(`snapshot warm-up: the shipped config/${name} does not parse`);
    warmed.push(name);
  }
  warmTemplateParsers(shippedYamlNames(), textOf);
  return warmed;
}

/** The shipped participant templates a start reads: the default collective (`legion init`) and the demo's agents. */
const TEMPLATE_DIRS = /^(agents|demo-agents)\/[^/]+\.ya?ml$/;

/**
 * Like `warmStartParsers`, for the participants every start parses: each shipped template
 * (`config/agents/`, `config/demo-agents/`, read by `legion init` and a demo start) through its
 * parser, and as the participant file `legion init` writes of it, through the participant
 * store's; both results are kept by their exact text, so a start whose files are these parses
 * none (collective/templates.ts, collective/store.ts). Returns the names warmed; throws when one
 * does not parse (the build then fails).
 */
export function warmTemplateParsers(names: readonly string[], textOf: (name: string) => string | undefined = shippedYamlText): string[] {
  const warmed: string[] = [];
  for (const name of names) {
    if (!TEMPLATE_DIRS.test(name)) continue;
    const text = textOf(name);
    if (text === undefined) throw new Error(`snapshot warm-up: config/${name} is not in the bundle`);
    precompileShippedParticipantFile(precompileShippedTemplate(text, `config/${name}`));
    warmed.push(name);
  }
  return warmed;
}

/**
 * The shipped config (`config/legion.yaml`, carried in the bundle): what the snapshot build's
 * warm-up render draws with (components/warm-render.tsx). Throws when it is missing or does not
 * validate (the build then fails).
 */
export function shippedConfig(textOf: (name: string) => string | undefined = shippedYamlText): LegionConfig {
  const text = textOf('legion.yaml');
  if (text === undefined) throw new Error('snapshot warm-up: config/legion.yaml is not in the bundle');
  const parsed = parseYamlSource(text, 'config/legion.yaml');
  const loaded = parsed.ok ? validateLayers([parsed.source]) : null;
  if (!loaded?.ok) throw new Error('snapshot warm-up: the shipped config/legion.yaml does not validate');
  return loaded.config;
}
