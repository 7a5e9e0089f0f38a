import { z } from 'zod';
import type { Tool } from '../../tools/types';
import type { CollectiveToolDeps } from './deps';
import { lazySchema } from '../../storage/lazy-schema';

const schema = lazySchema(() => z.strictObject({}));

/** Every tool that exists, for choosing what to grant an agent. */
export function createListToolsTool(deps: Pick<CollectiveToolDeps, 'tools'>): Tool<z.infer<ReturnType<typeof schema>>> {
  return {
    name: 'list_tools',
    description: 'List every tool an agent can be given, with a one-line description each.',
    get schema() {
      return schema();
    },
    keyArgument: () => undefined,
    readOnly: true,
    async execute() {
      const tools = deps.tools.list();
      const lines = tools.map((t) => `- ${t.name}: ${t.description.split('\n', 1)[0]}`);
      return { content: lines.join('\n'), summary: `${tools.length} tools` };
    },
  };
}
