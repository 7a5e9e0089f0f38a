import { z } from 'zod';
import type { Tool } from '../types';
import { errorResult, okResult } from '../result';
import { lazySchema } from '../../storage/lazy-schema';

/** One skill as the tool sees it (src/conventions/skills.ts finds them). */
export interface SkillEntry {
  readonly name: string;
  readonly description: string;
  /** The skill's folder (absolute). */
  readonly dir: string;
}

/** The skills of the run: listed and loaded by name; a file of a skill read by its path inside the skill's folder. */
export interface SkillCatalog {
  list(): readonly SkillEntry[];
  /** The body of SKILL.md (front matter left out) and the files beside it, or why not. */
  load(name: string): Promise<{ ok: true; body: string; files: readonly string[] } | { ok: false; error: string }>;
  /** A file of the skill's folder (`scripts/run.sh`); never outside it. */
  readFile(name: string, file: string): Promise<{ ok: true; text: string } | { ok: false; error: string }>;
}

/** The catalog of a run without skills (and of the shipped tool definitions). */
export const NO_SKILLS: SkillCatalog = {
  list: () => [],
  load: async (name) => ({ ok: false, error: `no skill "${name}" (this workspace has no skills)` }),
  readFile: async (name) => ({ ok: false, error: `no skill "${name}" (this workspace has no skills)` }),
};

const schema = lazySchema(() =>
  z.strictObject({
    name: z.string().min(1).describe('The skill\'s name, as listed under "Skills" in your instructions'),
    file: z.string().min(1).optional().describe('A file of the skill\'s folder to read instead of SKILL.md (e.g. "reference.md")'),
  }),
);

/**
 * `skill` (docs/conventions.md#skills): `{ name }` returns the skill's instructions (its
 * SKILL.md body) and the files beside it; `{ name, file }` returns one of those files. Reads
 * only inside the skill's own folder.
 */
export function createSkillTool(catalog: SkillCatalog): Tool<z.infer<ReturnType<typeof schema>>> {
  return {
    name: 'skill',
    description:
      'Load a skill: instructions for a kind of task, listed under "Skills" in your instructions. ' +
      'Returns the skill\'s instructions and the files beside them; pass file to read one of those files.',
    get schema() {
      return schema();
    },
    readOnly: true,
    keyArgument: (input) => (input.file ? `${input.name}/${input.file}` : input.name),
    async execute(input) {
      if (input.file !== undefined) {
        const got = await catalog.readFile(input.name, input.file);
        return got.ok ? okResult(got.text, `${input.name}/${input.file}`) : errorResult(got.error);
      }
      const got = await catalog.load(input.name);
      if (!got.ok) return errorResult(got.error);
      const files = got.files.length > 0 ? `\n\n[files of this skill, read with {"name": "${input.name}", "file": …}: ${got.files.join(', ')}]` : '';
      return okResult(`${got.body}${files}`, `skill ${input.name}`);
    },
  };
}
