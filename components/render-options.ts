/**
 * How often Ink may draw: high, so a keystroke is never held back by Ink's own throttle.
 * Streamed output is paced separately, at `ui.maxFps`, by the UI store.
 */
export const INK_MAX_FPS = 250;
