// A small progress indicator: animated on a terminal, a single line otherwise, nothing when silent.
import { isOutputSilent } from "./logger.js";
import { highlighter } from "./highlighter.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export type Spinner = { succeed(text?: string): void; fail(text?: string): void };

/**
 * @example
 * const progress = spinner("Installing dependencies");
 * await install();
 * progress.succeed();
 */
export function spinner(text: string): Spinner {
  const stream = process.stderr;
  const animated = !isOutputSilent() && stream.isTTY === true;
  let frame = 0;
  const timer = animated
    ? setInterval(() => stream.write(`\r${highlighter.info(FRAMES[frame++ % FRAMES.length] ?? "")} ${text}`), 80)
    : undefined;
  if (!animated && !isOutputSilent()) stream.write(`… ${text}\n`);
  const end = (mark: string, line: string) => {
    if (timer) clearInterval(timer);
    if (isOutputSilent()) return;
    stream.write(`${animated ? "\r\x1b[K" : ""}${mark} ${line}\n`);
  };
  return {
    succeed: (done = text) => end(highlighter.success("✔"), done),
    fail: (failed = text) => end(highlighter.error("✖"), failed),
  };
}
