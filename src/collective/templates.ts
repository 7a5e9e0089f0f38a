import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseYamlSource } from '../config/yaml-source';
import { participantSchema, type Participant } from './participant';
import { LegionError } from '../errors';
import { ONE_SHOT } from '../storage/zod-validate';
import { deepFreeze } from '../storage/deep-freeze';

/** Load the participant templates of `config/agents/*.yaml` (the default collective). */
export async function loadTemplates(agentsDir: string): Promise<Participant[]> {
  const files = (await readdir(agentsDir)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
  const out: Participant[] = [];
  for (const name of files) {
    const file = join(agentsDir, name);
    out.push(parseTemplate(await readFile(file, 'utf8'), file));
  }
  return out;
}

/**
 * Templates parsed while the start-up snapshot was built (`precompileShippedTemplate`), by their
 * exact text: the shipped `config/agents/` and `config/demo-agents/` files, which `legion init`
 * and every demo start parse. Frozen; a load gets its own copy; any other text is parsed
 * (docs/performance.md#the-start-up-snapshot).
 */
const shippedTemplates = new Map<string, Readonly<Participant>>();

/** Parse a shipped template and keep it for loads of exactly its text (src/cli/snapshot-warm.ts); throws as a load would. */
export function precompileShippedTemplate(text: string, file: string): Participant {
  const participant = parseTemplate(text, file);
  shippedTemplates.set(text, deepFreeze(structuredClone(participant)));
  return participant;
}

/** One participant template's text (YAML); a problem is a LegionError naming `file` and the line. */
export function parseTemplate(text: string, file: string): Participant {
  const kept = shippedTemplates.get(text);
  if (kept !== undefined) return structuredClone(kept) as Participant;
  const parsed = parseYamlSource(text, file);
  if (!parsed.ok) throw new LegionError(parsed.error);
  const result = participantSchema().safeParse(parsed.source.data, ONE_SHOT);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.map(String);
    throw new LegionError(`${file}:${parsed.source.lineOf(path) ?? 1}: ${path.join('.') || '(root)'}: ${issue.message}`);
  }
  return result.data;
}
