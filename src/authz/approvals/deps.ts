/** The project's injected time and id sources (src/session/ids.ts): `() => Date`, `() => string` token. */
export type { Clock, IdSource } from '../../session/ids';
