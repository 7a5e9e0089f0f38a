/**
 * Child for test/integration/runtime/restart-crash.test.ts: starts a core over <workspace>,
 * sends "<message>" to <agent>, prints `pending <requestId>` once an approval request for the
 * user is raised, then idles until the parent kills it (SIGKILL: no shutdown runs).
 *
 *   node --import tsx restart-approvals-child.ts <workspace> <agent> <message>
 */
import { startRestartHarness } from './restart-fixture';

const [workspace, agent, message] = process.argv.slice(2);
if (!workspace || !agent || !message) throw new Error('usage: restart-approvals-child.ts <workspace> <agent> <message>');
const harness = await startRestartHarness(workspace);
const sent = harness.core.send(agent, message);
if (!sent.ok) throw new Error(sent.error);
const request = await harness.waitFor((e) => e.type === 'approval-request' && e.approverId === 'user', 10_000);
process.stdout.write(`pending ${request.type === 'approval-request' ? request.requestId : ''}\n`);
setInterval(() => undefined, 60_000);
