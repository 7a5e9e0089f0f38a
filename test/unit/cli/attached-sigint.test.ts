import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { onAttachedSigint } from '../../../src/cli/attached-sigint';

/** Ctrl+C of an attached `legion run` (docs/serve.md#attaching), over a fake process. */
function fakeProcess(): { proc: EventEmitter & { exit(code: number): void }; exits: number[] } {
  const exits: number[] = [];
  const proc = Object.assign(new EventEmitter(), { exit: (code: number) => void exits.push(code) });
  return { proc, exits };
}

test('the first Ctrl+C interrupts and says a second one detaches; the second detaches and exits with the code', () => {
  const { proc, exits } = fakeProcess();
  const said: string[] = [];
  const calls: string[] = [];
  onAttachedSigint((t) => void said.push(t), { interrupt: () => void calls.push('interrupt'), detach: () => void calls.push('detach'), code: 130 }, proc as never);
  proc.emit('SIGINT');
  assert.deepEqual([calls, exits, said], [['interrupt'], [], ['legion: interrupting… (Ctrl+C again to detach)\n']]);
  proc.emit('SIGINT');
  assert.deepEqual([calls, exits], [['interrupt', 'detach'], [130]]);
  assert.equal(proc.listenerCount('SIGINT'), 0);
});

test('the returned function removes the handler', () => {
  const { proc, exits } = fakeProcess();
  const calls: string[] = [];
  const off = onAttachedSigint(() => undefined, { interrupt: () => void calls.push('interrupt'), detach: () => void calls.push('detach'), code: 130 }, proc as never);
  off();
  proc.emit('SIGINT');
  assert.deepEqual([calls, exits, proc.listenerCount('SIGINT')], [[], [], 0]);
});
