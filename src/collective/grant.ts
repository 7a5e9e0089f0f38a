import type { Agent, Participant } from './participant';

/** Privilege checks for spawn/modify/retire (docs: authorization): null when allowed, else why not. */
export interface GrantGuard {
  grant(caller: Participant, proposed: Agent, existing: Agent | undefined): string | null;
  retire(caller: Participant, target: Participant): string | null;
}
