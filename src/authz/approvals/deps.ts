/** Time source passed in (tests pin it). */
export interface Clock {
  now(): Date;
}

/** Id source passed in; `next('apr')` returns a fresh id such as `apr-1` (tests use a counter). */
export interface IdSource {
  next(prefix: string): string;
}
