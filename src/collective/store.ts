import { readdir, readFile } from 'node:fs/promises';
import { jsonFileText, writeJsonAtomic } from '../storage/atomic';
import type { Layout } from '../storage/layout';
import { participantFileSchema, USER_ID, type Agent, type Participant } from './participant';
import type { WorkspaceTrust } from '../storage/workspace-trust';
import { LegionError } from '../errors';
import { ONE_SHOT } from '../storage/zod-validate';
import { deepFreeze } from '../storage/deep-freeze';

/**
 * Participants on disk: one JSON file each, written atomically, validated on load.
 * A corrupt file is one error naming it; it is never overwritten by a load.
 */
export interface ParticipantStore {
  /**
   * Every stored participant. `trust` is required (docs/workspace-trust.md): in an untrusted
   * workspace agents load without their `approvalAuthority` and users other than `user` are
   * left out (their authority is `'*'` by definition); the files are not changed, so trusting
   * the workspace later restores them. A stripped agent saved again (a `modify_agent` that left
   * its authority alone) is written with the authority its file had.
   */
  loadAll(trust: WorkspaceTrust): Promise<Participant[]>;
  save(participant: Participant): Promise<void>;
}

const holdsAuthority = (agent: Agent): boolean => agent.approvalAuthority === '*' || agent.approvalAuthority.length > 0;

/** What an untrusted workspace's participants keep: no agent can approve, no second user. */
function withoutAuthority(participants: readonly Participant[]): Participant[] {
  return participants
    .filter((p) => p.kind === 'agent' || p.id === USER_ID)
    .map((p) => (p.kind === 'agent' && holdsAuthority(p) ? { ...p, approvalAuthority: [] } : p));
}

/**
 * Participant files parsed while the start-up snapshot was built (`precompileShippedParticipantFile`),
 * by their exact text: the files `legion init` writes of the shipped templates, which every start
 * in such a workspace parses before its first frame. Frozen; a load gets its own copy, and the
 * name check below still runs. Any other text is parsed (docs/performance.md#the-start-up-snapshot).
 */
const shippedFiles = new Map<string, Readonly<Participant>>();

/**
 * Keep the participant file `legion init` writes of `participant` (a shipped template) for loads
 * of exactly its text (src/cli/snapshot-warm.ts). Returns that text; throws as a load would.
 */
export function precompileShippedParticipantFile(participant: Participant): string {
  const text = jsonFileText({ version: 1, ...participant });
  shippedFiles.set(text, deepFreeze(parseParticipantFile(text, `participants/${participant.id}.json`, `${participant.id}.json`)));
  return text;
}

/** One participant file's text (JSON, named `name`); a problem is a LegionError naming `file`. */
export function parseParticipantFile(text: string, file: string, name: string): Participant {
  const kept = shippedFiles.get(text);
  if (kept !== undefined) {
    if (`${kept.id}.json` !== name) throw new LegionError(`${file}: id "${kept.id}" does not match the file name`);
    return structuredClone(kept) as Participant;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new LegionError(`${file}: not valid JSON (${(error as Error).message}); the file is damaged: restore it, or run \`legion init --force\` to reset the collective`);
  }
  const result = participantFileSchema().safeParse(raw, ONE_SHOT);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new LegionError(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const { version: _version, ...participant } = result.data as Participant & { version?: number };
  if (`${participant.id}.json` !== name) throw new LegionError(`${file}: id "${participant.id}" does not match the file name`);
  return participant as Participant;
}

/** `scrub`: applied to a participant before it is written (secret scrubbing); default none. */
export function createParticipantStore(layout: Layout, options: { readonly scrub?: <T>(value: T) => T } = {}): ParticipantStore {
  const scrub = options.scrub ?? (<T>(value: T): T => value);
  // What an untrusted load stripped, by id: written back by `save` while memory still says none.
  const stripped = new Map<string, Agent['approvalAuthority']>();
  return {
    async loadAll(trust) {
      let names: string[];
      try {
        names = (await readdir(layout.participantsDir)).filter((n) => n.endsWith('.json')).sort();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      const out: Participant[] = [];
      for (const name of names) {
        const file = `${layout.participantsDir}/${name}`;
        out.push(parseParticipantFile(await readFile(file, 'utf8'), file, name));
      }
      if (trust.trusted) return out;
      for (const p of out) if (p.kind === 'agent' && holdsAuthority(p)) stripped.set(p.id, p.approvalAuthority);
      return withoutAuthority(out);
    },
    async save(participant) {
      const kept = stripped.get(participant.id);
      const written = kept !== undefined && participant.kind === 'agent' && !holdsAuthority(participant) ? { ...participant, approvalAuthority: kept } : participant;
      await writeJsonAtomic(layout.participant(participant.id), { version: 1, ...scrub(written) });
    },
  };
}
