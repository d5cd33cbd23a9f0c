// The seed's ten non-negotiable rules of idempotency, each with the doctor checks that audit it: the MCP server's `blocks://rules` resource.
import { RULES, type Rule } from "../doctor/finding.js";
import type { DoctorNames } from "../registry/block-schema.js";

/** The rules as the production guide states them; `checkedBy` names doctor's checks (none: a rule for code review and tests). */
export const TEN_RULES: ReadonlyArray<{ rule: string; checkedBy: readonly Rule[] }> = [
  {
    rule: "create must be atomic: a unique constraint on (operation, user_id, key), or an equivalent.",
    checkedBy: ["migration-applied"],
  },
  {
    rule: "getUserId must resolve a real authenticated user id; never ship the anonymous default.",
    checkedBy: ["route-user-id"],
  },
  { rule: "Set isPermanentError explicitly on every protected route.", checkedBy: ["route-permanent-error"] },
  { rule: "Set requireKey: true on state-changing routes you care about.", checkedBy: ["route-require-key"] },
  {
    rule: "Run recoverStuckRecords and cleanupExpiredRecords on a schedule from day one.",
    checkedBy: ["maintenance-scheduled"],
  },
  { rule: "The retry counter must survive record deletion (its own table).", checkedBy: ["migration-applied"] },
  {
    rule: "markSuccess/markFailed are conditional on the current status (the vendored stores do this; keep it when you edit them).",
    checkedBy: [],
  },
  {
    rule: "Wire logger and metrics before the first deploy: the first incident will need them.",
    checkedBy: ["handler-observability"],
  },
  { rule: "Document the client contract (same key and same payload per retry) and enforce it.", checkedBy: [] },
  { rule: "Test the failure modes, not just the happy path (the vendored tests are the template).", checkedBy: [] },
];

/**
 * The ten rules as markdown, each with its doctor checks and their fixes, then the checks outside them.
 * A block's rule takes its fix from the blocks that declare its check (block.json's `doctor`).
 *
 * @example
 * rulesMarkdown(registry.blocks.flatMap((block) => block.doctor ?? [])).startsWith("# The ten rules"); // true
 */
export function rulesMarkdown(declared: DoctorNames[]): string {
  const fixes = fixesByRule(declared);
  const covered = new Set(TEN_RULES.flatMap((entry) => entry.checkedBy));
  const lines = [
    "# The ten rules of idempotency",
    "",
    "`blocks doctor` (the MCP tool `doctor`) reports a finding per broken check, with file:line and the fix.",
    "",
  ];
  TEN_RULES.forEach((entry, at) => {
    lines.push(`${at + 1}. ${entry.rule}`);
    const checks = entry.checkedBy.filter((check) => fixes.has(check));
    for (const check of checks)
      for (const fix of fixes.get(check) ?? []) lines.push(`   - doctor \`${check}\`: ${fix}`);
    if (checks.length === 0) lines.push("   - not checked by doctor: review it.");
  });
  lines.push("", "## doctor also checks", "");
  for (const [check, checkFixes] of [...fixes].filter(([check]) => !covered.has(check)))
    for (const fix of checkFixes) lines.push(`- \`${check}\`: ${fix}`);
  return `${lines.join("\n")}\n`;
}

/** Each rule's fixes: the CLI's own, then every block's for the checks it declares. */
function fixesByRule(declared: DoctorNames[]): Map<Rule, string[]> {
  const fixes = new Map<Rule, string[]>(Object.entries(RULES).map(([rule, fix]) => [rule as Rule, [fix]]));
  for (const doctor of declared) {
    const parts = [doctor.routes, doctor.handler, doctor.handler?.cache, doctor.maintenance];
    for (const part of parts)
      for (const [rule, fix] of Object.entries(part?.fixes ?? {}))
        fixes.set(rule as Rule, [...new Set([...(fixes.get(rule as Rule) ?? []), fix])]);
  }
  return fixes;
}
