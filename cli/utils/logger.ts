// The only way the CLI prints: human lines on stderr/stdout, silenced by --silent and --json.
import { highlighter } from "./highlighter.js";

const state = { silent: false };

/**
 * Silences human output; `--json` silences it too so stdout carries one JSON document only.
 *
 * @example
 * configureOutput({ silent: options.silent || options.json });
 */
export function configureOutput(options: { silent?: boolean | undefined }): void {
  state.silent = options.silent === true;
}

/**
 * Whether human output is currently shown (spinners check it too).
 *
 * @example
 * if (!isOutputSilent()) stream.write("…");
 */
export function isOutputSilent(): boolean {
  return state.silent;
}

function print(stream: NodeJS.WriteStream, text: string): void {
  if (!state.silent) stream.write(`${text}\n`);
}

/**
 * @example
 * logger.success("Wrote blocks.json");
 */
export const logger = {
  log: (text = "") => print(process.stdout, text),
  info: (text: string) => print(process.stdout, highlighter.info(text)),
  success: (text: string) => print(process.stdout, `${highlighter.success("✔")} ${text}`),
  warn: (text: string) => print(process.stderr, highlighter.warn(`⚠ ${text}`)),
  error: (text: string) => print(process.stderr, highlighter.error(text)),
  break: () => print(process.stdout, ""),
};

/**
 * Writes machine-readable output: always shown, whatever --silent says.
 *
 * @example
 * printJson({ ok: true, files });
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
