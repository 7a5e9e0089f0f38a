import type * as Http from 'node:http';
import type * as Https from 'node:https';
import type * as Zlib from 'node:zlib';
import { createRequire } from 'node:module';

export interface HttpModules {
  readonly http: typeof Http;
  readonly https: typeof Https;
  readonly zlib: typeof Zlib;
}
let modules: HttpModules | undefined;

/**
 * node:http, node:https (with TLS) and node:zlib, loaded by the first request (a provider's,
 * or the engine's admin and ingress requests), not when a module that makes requests is
 * evaluated: a start evaluates those and draws its first frame without a request
 * (docs/performance.md#start-up; scripts/start-path.mjs refuses a static import of them).
 */
export function httpModules(): HttpModules {
  if (!modules) {
    const load = createRequire(import.meta.url);
    modules = { http: load('node:http') as typeof Http, https: load('node:https') as typeof Https, zlib: load('node:zlib') as typeof Zlib };
  }
  return modules;
}
