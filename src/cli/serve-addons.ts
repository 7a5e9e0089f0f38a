import type { ServeAddon } from '../serve/addon';
import { webAddon } from '../remote/web/addon';

/** What runs inside `legion serve` besides the socket (docs/serve.md#addons). Later modules add theirs here. */
export const SERVE_ADDONS: readonly ServeAddon[] = [webAddon];
