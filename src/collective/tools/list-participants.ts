import { z } from 'zod';
import type { Tool } from '../../tools/types';
import type { Participant } from '../participant';
import type { CollectiveToolDeps } from './deps';
import { lazySchema } from '../../storage/lazy-schema';

const schema = lazySchema(() => z.strictObject({}));

function describe(p: Participant): string {
  const head = `- ${p.id} (${p.kind}${p.status === 'retired' ? ', retired' : ''}): ${p.name}${p.description ? ` — ${p.description}` : ''}`;
  if (p.kind === 'user') return `${head}\n  approves: everything`;
  const authority = p.approvalAuthority === '*' ? 'everything' : p.approvalAuthority.length ? p.approvalAuthority.join(', ') : 'nothing';
  return `${head}\n  tools: ${p.tools.join(', ') || '(none)'}; approves: ${authority}`;
}

/** Who is in the collective, with tools and approval authority. */
export function createListParticipantsTool(deps: Pick<CollectiveToolDeps, 'registry'>): Tool<z.infer<ReturnType<typeof schema>>> {
  return {
    name: 'list_participants',
    description: 'List the participants of the collective (agents and the user) with their descriptions, tools and approval authority.',
    get schema() {
      return schema();
    },
    keyArgument: () => undefined,
    readOnly: true,
    async execute() {
      const all = deps.registry.list();
      const active = all.filter((p) => p.status === 'active');
      const retired = all.length - active.length;
      const text = active.map(describe).join('\n') + (retired ? `\n(${retired} retired participant${retired > 1 ? 's' : ''} not shown)` : '');
      return { content: text, summary: `${active.length} participants` };
    },
  };
}
