// Colour roles for CLI output; kleur turns them off without a terminal, with NO_COLOR or TERM=dumb.
import kleur from "kleur";

/**
 * @example
 * logger.log(`Wrote ${highlighter.path("src/blocks/idempotency/index.ts")}`);
 */
export const highlighter = {
  info: kleur.cyan,
  success: kleur.green,
  warn: kleur.yellow,
  error: kleur.red,
  path: kleur.bold,
  code: kleur.cyan,
  dim: kleur.dim,
  added: kleur.green,
  removed: kleur.red,
};
