/** Headless approvals (`legion run --approve`): what would reach the user is decided at once. */
export interface HeadlessMode {
  readonly approve: 'deny' | 'all';
}
