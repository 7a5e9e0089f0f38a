import type { ServerResponse } from 'node:http';

/**
 * Server-Sent Events to any number of page clients. Each frame is serialized once. A client
 * whose unsent data passes `maxBufferedBytes` (a slow phone, a stalled tab) is cut off; its
 * EventSource reconnects and the page reloads its state, so nothing grows without bound.
 */
export interface SseHub {
  add(res: ServerResponse): void;
  broadcast(id: number, data: unknown): void;
  size(): number;
  closeAll(): void;
}

export function createSseHub(options: {
  maxBufferedBytes: number;
  heartbeatMs?: number;
  onCutOff?: () => void;
  /** Sent with every stream's head besides its own (the server's security headers). */
  headers?: Readonly<Record<string, string>>;
}): SseHub {
  const clients = new Set<ServerResponse>();
  const drop = (res: ServerResponse): void => {
    clients.delete(res);
    res.destroy();
  };
  const heartbeat = setInterval(() => {
    for (const res of clients) res.write(': ping\n\n');
  }, options.heartbeatMs ?? 20_000);
  heartbeat.unref();
  return {
    add(res) {
      res.writeHead(200, {
        ...options.headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 2000\n\n');
      clients.add(res);
      res.on('close', () => clients.delete(res));
    },
    broadcast(id, data) {
      if (clients.size === 0) return;
      let frame: string;
      try {
        frame = `id: ${id}\ndata: ${JSON.stringify(data)}\n\n`;
      } catch {
        return;
      }
      for (const res of clients) {
        if (res.writableLength > options.maxBufferedBytes) {
          drop(res);
          options.onCutOff?.();
          continue;
        }
        res.write(frame);
      }
    },
    size: () => clients.size,
    closeAll() {
      clearInterval(heartbeat);
      for (const res of [...clients]) drop(res);
    },
  };
}
