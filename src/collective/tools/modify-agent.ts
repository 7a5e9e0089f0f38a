import { z } from 'zod';
import type { Tool } from '../../tools/types';
import { modifySpecSchema } from '../registry';
import { outcome } from './registry-result';
import { NO_SERVICES, servicesOf } from './services';

/** Change an agent's fields (id plus any spawn field). */
export const modifyAgentTool: Tool<z.input<typeof modifySpecSchema>> = {
  name: 'modify_agent',
  description: 'Change an existing agent: give its id and only the fields to change (same fields as spawn_agent).',
  schema: modifySpecSchema,
  keyArgument: (input) => input.id,
  // The collective's writes are under .legion/, never the workspace's files.
  keepsWorkspaceFiles: true,
  async execute(input, context) {
    const services = servicesOf(context);
    if (!services) return NO_SERVICES;
    return outcome(await services.registry.modify(context.participantId, input), 'modify', String(input.id));
  },
};
