// Asks the user only when a terminal can answer; otherwise fails fast, naming the flag that decides.
import prompts from "prompts";
import { BlocksError } from "./errors.js";

export type Decision = {
  /** The question, e.g. "Write 12 files and install 4 packages?" */
  message: string;
  /** The flag that answers it without a terminal, e.g. "--yes". */
  flag: string;
  /** What `--yes` answers, and the prompt's default (Enter): true unless the question is about destroying something. */
  yesAnswer?: boolean;
};

/**
 * Whether prompts can be shown: both ends must be a terminal, and CI never counts as one.
 *
 * @example
 * if (!canPrompt()) throw new BlocksError("DECISION_REQUIRED", "...");
 */
export function canPrompt(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true && !process.env.CI;
}

/**
 * Answers a yes/no decision: from `--yes`, else from the terminal, else by failing with DECISION_REQUIRED.
 *
 * @example
 * if (!(await decide({ message: "Write 12 files?", flag: "--yes" }, options.yes))) throw cancelled();
 */
export async function decide(decision: Decision, yes: boolean | undefined): Promise<boolean> {
  if (yes) return decision.yesAnswer ?? true;
  if (!canPrompt()) {
    throw new BlocksError("DECISION_REQUIRED", `${decision.message} There is no terminal to ask.`, {
      suggestion: `Pass ${decision.flag} to decide without a prompt.`,
    });
  }
  const { answer } = await prompts(
    { type: "confirm", name: "answer", message: decision.message, initial: decision.yesAnswer ?? true },
    { onCancel: () => cancelled() },
  );
  return answer === true;
}

/**
 * Picks from a list on a terminal; without one, fails naming `flag`.
 *
 * @example
 * const frameworks = await choose("Which frameworks?", ["express", "hono"], "--framework <name>");
 */
export async function choose(message: string, choices: string[], flag: string): Promise<string[]> {
  if (!canPrompt()) {
    throw new BlocksError("DECISION_REQUIRED", `${message} There is no terminal to ask.`, {
      suggestion: `Pass ${flag} to decide without a prompt.`,
    });
  }
  const { picked } = await prompts(
    { type: "multiselect", name: "picked", message, choices: choices.map((value) => ({ title: value, value })) },
    { onCancel: () => cancelled() },
  );
  return (picked as string[] | undefined) ?? [];
}

/**
 * The error for a prompt the user cancelled (Ctrl-C, Esc).
 *
 * @example
 * prompts(question, { onCancel: () => cancelled() });
 */
export function cancelled(): never {
  throw new BlocksError("CANCELLED", "Cancelled; nothing was written.");
}
