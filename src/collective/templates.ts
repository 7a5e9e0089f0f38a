import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseYamlSource } from '../config/yaml-source';
import { participantSchema, type Participant } from './participant';
import { LegionError } from '../errors';
import { ONE_SHOT } from '../storage/zod-validate';

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

/** One participant template's text (YAML); a problem is a LegionError naming `file` and the line. */
export function parseTemplate(text: string, file: string): Participant {
  const parsed = parseYamlSource(text, file);
  if (!parsed.ok) throw new LegionError(parsed.error);
  const result = participantSchema.safeParse(parsed.source.data, ONE_SHOT);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.map(String);
    throw new LegionError(`${file}:${parsed.source.lineOf(path) ?? 1}: ${path.join('.') || '(root)'}: ${issue.message}`);
  }
  return result.data;
}
