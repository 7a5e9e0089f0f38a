import { z } from 'zod';
import type { Tool } from '../../tools/types';
import { NO_SERVICES, servicesOf } from './services';

const schema = z.strictObject({});

/** Every tool that exists, for choosing what to grant an agent. */
export const listToolsTool: Tool<z.infer<typeof schema>> = {
  name: 'list_tools',
  description: 'List every tool an agent can be given, with a one-line description each.',
  schema,
  keyArgument: () => undefined,
  readOnly: true,
  async execute(_input, context) {
    const services = servicesOf(context);
    if (!services) return NO_SERVICES;
    const tools = services.tools.list();
    const lines = tools.map((t) => `- ${t.name}: ${t.description.split('\n', 1)[0]}`);
    return { content: lines.join('\n'), summary: `${tools.length} tools` };
  },
};
