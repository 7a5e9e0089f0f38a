import type { ProviderEvent, ProviderRequest } from './types';
import { createHttpWatch, type HttpWatch, type VendorId } from './http-watch';
import { describeFailure, endedEarly } from './failure';

/** What both vendors' assemblers offer: SDK chunks in, provider events out. */
export interface StreamAssembler<Chunk> {
  push(chunk: Chunk): ProviderEvent[];
  /** Tokens counted so far (reported even when the turn fails). */
  usage(): ProviderEvent | null;
  /** After a normal end: the closing events, or null if the stream never reached its final event. */
  finish(): ProviderEvent[] | null;
}

export interface DrainOptions<Chunk> {
  readonly vendor: VendorId;
  readonly maxRetries: number;
  readonly idleTimeoutMs: number;
  readonly fetch?: typeof fetch;
  readonly request: ProviderRequest;
  /** The caller's signal. */
  readonly signal: AbortSignal;
  readonly assembler: StreamAssembler<Chunk>;
  /** Import the SDK, build the client on `watch.fetch` and start the streaming request on `watch.signal`. */
  readonly open: (watch: HttpWatch) => Promise<AsyncIterable<Chunk>>;
}

/**
 * One provider call under an HTTP watch: the SDK stream is drained through the assembler,
 * then either the closing events are yielded, or (aborted, failed, ended early) the usage
 * already billed followed by exactly one `error` event. Never throws.
 */
export async function* drainStream<Chunk>(options: DrainOptions<Chunk>): AsyncGenerator<ProviderEvent> {
  const { vendor, maxRetries, idleTimeoutMs, request, signal, assembler } = options;
  const watch = createHttpWatch({
    vendor,
    maxRetries,
    idleTimeoutMs,
    signal,
    baseFetch: options.fetch,
    onNotice: request.onNotice,
  });
  const ctx = { watch, callerSignal: signal, idleTimeoutMs, maxRetries };
  let failure: ProviderEvent | null = null;
  try {
    const stream = await options.open(watch);
    for await (const chunk of stream) {
      for (const out of assembler.push(chunk)) yield out;
    }
    // The SDKs end an aborted stream silently: say why it stopped.
    if (watch.signal.aborted) failure = describeFailure(vendor, new Error('aborted'), ctx);
    else {
      const finish = assembler.finish();
      if (finish) {
        yield* finish;
        return;
      }
      failure = endedEarly(vendor, watch);
    }
  } catch (error) {
    failure = describeFailure(vendor, error, ctx);
  } finally {
    watch.dispose();
  }
  // Tokens already billed are still reported.
  const usage = assembler.usage();
  if (usage) yield usage;
  yield failure;
}
