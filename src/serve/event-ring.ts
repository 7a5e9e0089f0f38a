/**
 * The server's memory of recent events, as the lines it pushed (serialized once): bounded by
 * count and by size (characters of the lines), oldest dropped first; the newest line is kept
 * even when it alone is larger. A client re-attaching with `since` gets the lines
 * after it when the ring still holds them all; else it must take a snapshot.
 */
export interface EventRing {
  add(seq: number, line: string): void;
  /** The lines of events with seq > `since`, or null when some of them were already dropped (or `since` is in the future). */
  after(since: number): string[] | null;
  readonly size: number;
  readonly bytes: number;
}

export function createEventRing(options: { maxEvents: number; maxBytes: number; lastSeq: number }): EventRing {
  const seqs: number[] = [];
  const lines: string[] = [];
  let head = 0;
  let bytes = 0;
  /** Every event with seq <= this was dropped or came before the server started. */
  let floor = options.lastSeq;
  let last = options.lastSeq;

  const compact = (): void => {
    if (head > 1024 && head * 2 > seqs.length) {
      seqs.splice(0, head);
      lines.splice(0, head);
      head = 0;
    }
  };

  return {
    add(seq, line) {
      seqs.push(seq);
      lines.push(line);
      bytes += line.length;
      last = seq;
      while (seqs.length - head > options.maxEvents || (bytes > options.maxBytes && seqs.length - head > 1)) {
        floor = seqs[head]!;
        bytes -= lines[head]!.length;
        lines[head] = '';
        head += 1;
      }
      compact();
    },
    after(since) {
      if (since < floor || since > last) return since === last ? [] : null;
      const out: string[] = [];
      for (let i = head; i < seqs.length; i++) if (seqs[i]! > since) out.push(lines[i]!);
      return out;
    },
    get size() {
      return seqs.length - head;
    },
    get bytes() {
      return bytes;
    },
  };
}
