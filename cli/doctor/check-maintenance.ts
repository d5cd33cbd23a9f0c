// The maintenance job a block wrote must be imported by the app (or scheduled from a script), or it never runs.
import path from "node:path";
import type { BlocksConfig } from "../config/blocks-config.js";
import type { Lock } from "../config/lock-file.js";
import type { Registry } from "../registry/manifest.js";
import { finding, type Finding } from "./finding.js";
import type { ProjectFiles } from "./project-files.js";

/**
 * @example
 * checkMaintenance(project, registry, lock, config, pkg.scripts); // the job file, when nothing imports or runs it
 */
export function checkMaintenance(project: ProjectFiles, registry: Registry, lock: Lock, config: BlocksConfig, scripts: Record<string, string>): Finding[] {
  const jobs = registry.blocks
    .filter((block) => block.name in lock.blocks)
    .flatMap((block) => block.templates ?? [])
    .map((template) => path.posix.normalize(path.posix.join(config.dir, template.target)))
    .filter((target) => /maintenance/.test(target));
  const findings: Finding[] = [];
  for (const job of jobs) {
    const stem = job.replace(/\.[cm]?[jt]sx?$/, "");
    const scheduledByScript = Object.values(scripts).some((script) => script.includes(stem) || script.includes(stem.replace(/^src\//, "dist/")));
    const imported = project.files.some((file) => {
      if (project.relative(file) === job) return false;
      return file.getImportDeclarations().some((declaration) => {
        const specifier = declaration.getModuleSpecifierValue().replace(/\.[cm]?jsx?$/, "");
        const resolved = specifier.startsWith(".") ? path.posix.join(path.posix.dirname(project.relative(file)), specifier) : specifier;
        return resolved === stem || resolved.endsWith(`/${path.posix.basename(stem)}`);
      });
    });
    if (!imported && !scheduledByScript) {
      findings.push(finding("maintenance-scheduled", job, 1, `${job} is never imported by the app nor run by a package.json script`));
    }
  }
  return findings;
}
