// The maintenance jobs must run somewhere: `startMaintenance()` called by the app, or the cron entry run by a script.
import path from "node:path";
import { SyntaxKind } from "ts-morph";
import type { BlocksConfig } from "../config/blocks-config.js";
import type { Lock } from "../config/lock-file.js";
import type { DoctorNames } from "../registry/block-schema.js";
import type { Registry } from "../registry/types.js";
import { finding, type Finding } from "./finding.js";
import type { ProjectFiles } from "./project-files.js";

const WIRING = /(^|\/)[\w-]+-setup\.[cm]?tsx?$/;

/**
 * A block that declares `doctor.maintenance` has jobs (idempotency's `createIdempotency().startMaintenance()`
 * and a one-shot cron entry). Neither runs by itself: the app calls the start function, or a
 * package.json script runs the cron entry. A crontab outside the project cannot be seen: say so in the fix.
 *
 * @example
 * checkMaintenance(project, registry, lock, config, pkg.scripts); // the wiring module, when nothing starts its jobs
 */
export function checkMaintenance(
  project: ProjectFiles,
  registry: Registry,
  lock: Lock,
  config: BlocksConfig,
  scripts: Record<string, string>,
): Finding[] {
  return registry.blocks.flatMap((block) => {
    const names = block.doctor?.maintenance;
    return names && block.name in lock.blocks ? checkJobs(project, config, scripts, names) : [];
  });
}

function checkJobs(
  project: ProjectFiles,
  config: BlocksConfig,
  scripts: Record<string, string>,
  names: NonNullable<DoctorNames["maintenance"]>,
): Finding[] {
  const isCronEntry = (text: string) => text.includes(names.cronEntry);
  const vendored = `${path.posix.normalize(config.dir)}/`;
  const own = project.files.filter((file) => {
    const relative = project.relative(file);
    return !relative.startsWith(vendored) && !WIRING.test(relative) && !isCronEntry(relative);
  });
  const startCall = (text: string) => text === names.start || text.endsWith(`.${names.start}`);
  const started = own.some((file) =>
    file.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => startCall(call.getExpression().getText())),
  );
  const scheduled = Object.values(scripts).some(isCronEntry);
  if (started || scheduled) return [];
  const wiring = project.files.find((file) => WIRING.test(project.relative(file)));
  const at = wiring ? project.relative(wiring) : vendored;
  // The wiring's own example of the call (its doc comment) is where the fix goes.
  const start = new RegExp(`\\b${names.start}\\b`);
  const index = wiring
    ? wiring
        .getFullText()
        .split("\n")
        .findIndex((text) => start.test(text))
    : -1;
  const line = index >= 0 ? index + 1 : 1;
  return [
    finding(
      "maintenance-scheduled",
      at,
      line,
      `the maintenance jobs (recovery of stuck keys, cleanup) are never started: no ${names.start}() call in the app and no script runs the cron entry`,
      names.fixes["maintenance-scheduled"],
    ),
  ];
}
