import * as restate from '@restatedev/restate-sdk';

/**
 * What one operation of a turn is to the driver (docs/engine.md#delegation):
 * - `call`: a delegation's call whose result the batch waits for: opens a window until the turn's
 *   next `model` step (the batch is over by then);
 * - `mailbox-call`: a call whose caller takes mail meanwhile: its delegation may outlive the batch
 *   (the call returns early with a request, the agent answers it in later steps), so it holds a
 *   window open until `release` (its mailbox closed, a command of the turn);
 * - `quiet`: an operation not made beside a command of the turn (where it falls among the turn's
 *   commands may differ between attempts): its promise joins the next race, it issues no wake step.
 */
export type Operation = 'call' | 'mailbox-call' | 'model' | 'quiet';

/**
 * How the promises of one invocation reach its turn (docs/engine.md#delegation).
 * The SDK drives one awaited promise per invocation, runs a `ctx.run` action only while it is
 * part of that promise, and an awaited combinator does not grow. So the driver awaits one race at
 * a time over the turn's promises not yet delivered, each result going to the turn as the race
 * gives it (the engine logs which member completed first: a replay takes the same branch).
 *
 * Which promises a race holds is fixed by the journal and the order in which the turn issues its
 * operations (the same on every attempt, as the order of its commands must be), never by timing:
 * - outside a window, the next promise in the order issued, one at a time;
 * - inside a window (while a delegation's call is out, see `Operation`), the race also holds
 *   a `wake <n>` step. Each operation of the turn issued in the window ends the pending wake step
 *   (its action returns the number of promises issued by then) and, when the operation issued a
 *   command, issues the next one right after it: the same place in the journal on every attempt
 *   (after a `quiet` operation, which issues none, what the turn issues waits until the promises
 *   raced before it have come back, as outside a window). When a wake step's result comes
 *   out of a race, the next race holds every promise up to the number it recorded (a replay waits
 *   for the turn to issue them again), so a tool of the delegation's batch runs while the callee
 *   does. Cost: one journaled step per operation issued inside a window, none outside one.
 */
export interface InvocationDriver {
  /** The promises one operation issued: each settles as its result reaches the turn (a promise rejected with the race's failure when the invocation was cancelled). */
  track(promises: readonly restate.RestatePromise<unknown>[], operation?: Operation): Promise<unknown>[];
  /** A `mailbox-call`'s window released: call right after the command that closed its mailbox. */
  release(): void;
}

interface Item {
  readonly promise: restate.RestatePromise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Wake {
  /** How many promises had been issued when it was. */
  readonly at: number;
  readonly promise: restate.RestatePromise<number>;
  fire(issued: number): void;
}

type News =
  | { readonly kind: 'item'; readonly index: number; readonly value: unknown; readonly failure?: unknown }
  | { readonly kind: 'wake'; readonly wake: Wake; readonly issued: number };

export function invocationDriver(ctx: restate.Context): InvocationDriver {
  const items: Item[] = [];
  /** items[0, basis) may be raced; those not delivered yet. */
  let basis = 0;
  const open = new Set<number>();
  const wakes = new Map<number, Wake>();
  /** Wakes a race may hold (issued at or below `basis`), not yet out of one. */
  const known = new Set<Wake>();
  let pending: Wake | undefined;
  let batchCall = false;
  let mailboxCalls = 0;
  let wakeCount = 0;
  let driving = false;
  let issuedWaiter: (() => void) | undefined;

  const issueWake = (at: number): Wake => {
    let fire!: (issued: number) => void;
    const fired = new Promise<number>((resolve) => { fire = resolve; });
    const wake: Wake = { at, promise: ctx.run(`wake ${++wakeCount}`, () => fired), fire };
    wakes.set(at, wake);
    return wake;
  };

  const raise = (to: number): void => {
    for (let i = basis; i < to; i++) open.add(i);
    for (let at = basis + 1; at <= to; at++) {
      const wake = wakes.get(at);
      if (wake) known.add(wake);
    }
    basis = to;
  };

  /** Resolves once the turn has issued `count` promises (at once when it has). */
  const issued = async (count: number): Promise<void> => {
    while (items.length < count) await new Promise<void>((resolve) => { issuedWaiter = resolve; });
  };

  const deliver = (index: number, value: unknown, failure: unknown): void => {
    open.delete(index);
    const item = items[index]!;
    if (failure !== undefined) item.reject(failure);
    else item.resolve(value);
  };

  const drive = async (): Promise<void> => {
    driving = true;
    for (;;) {
      if (open.size === 0 && known.size === 0) {
        if (basis === items.length) {
          driving = false;
          return;
        }
        raise(basis + 1);
      }
      const members: restate.RestatePromise<News>[] = [
        ...[...open].sort((a, b) => a - b).map((index) => items[index]!.promise.map((value, failure): News => ({ kind: 'item', index, value, failure }))),
        ...[...known].sort((a, b) => a.at - b.at).map((wake) => wake.promise.map((value, failure): News => {
          if (failure) throw failure;
          return { kind: 'wake', wake, issued: value! };
        })),
      ];
      let news: News;
      try {
        news = await restate.RestatePromise.race(members);
      } catch (error) {
        // The invocation cancelled (the SDK rejects the awaited race) or broken: every promise
        // raced hears it; the driver goes on with what the turn issues after.
        for (const index of [...open]) deliver(index, undefined, error);
        if (!(error instanceof restate.CancelledError)) known.clear();
        continue;
      }
      if (news.kind === 'item') {
        deliver(news.index, news.value, news.failure);
        continue;
      }
      known.delete(news.wake);
      await issued(news.issued);
      if (news.issued > basis) raise(news.issued);
    }
  };

  return {
    release: () => {
      mailboxCalls = Math.max(0, mailboxCalls - 1);
    },
    track: (promises, operation) => {
      const settled = promises.map((promise) => new Promise<unknown>((resolve, reject) => { items.push({ promise, resolve, reject }); }));
      const count = items.length;
      // Ends the pending wake step: its race lets the new promises in.
      pending?.fire(count);
      pending = undefined;
      if (operation === 'call') batchCall = true;
      if (operation === 'mailbox-call') mailboxCalls++;
      if (operation === 'model') batchCall = false;
      // A wake step is a command: issued only right after one of the turn's.
      if ((batchCall || mailboxCalls > 0) && operation !== 'quiet') pending = issueWake(count);
      const waiter = issuedWaiter;
      issuedWaiter = undefined;
      waiter?.();
      if (!driving) void drive();
      return settled;
    },
  };
}
