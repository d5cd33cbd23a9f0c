// The seed's ten non-negotiable rules of idempotency, each with the doctor checks that audit it: the MCP server's `blocks://rules` resource.
import { RULES, type Rule } from "../doctor/finding.js";

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
 *
 * @example
 * rulesMarkdown().startsWith("# The ten rules"); // true
 */
export function rulesMarkdown(): string {
  const covered = new Set(TEN_RULES.flatMap((entry) => entry.checkedBy));
  const lines = [
    "# The ten rules of idempotency",
    "",
    "`blocks doctor` (the MCP tool `doctor`) reports a finding per broken check, with file:line and the fix.",
    "",
  ];
  TEN_RULES.forEach((entry, at) => {
    lines.push(`${at + 1}. ${entry.rule}`);
    for (const check of entry.checkedBy) lines.push(`   - doctor \`${check}\`: ${RULES[check]}`);
    if (entry.checkedBy.length === 0) lines.push("   - not checked by doctor: review it.");
  });
  lines.push("", "## doctor also checks", "");
  for (const [check, fix] of Object.entries(RULES).filter(([check]) => !covered.has(check as Rule)))
    lines.push(`- \`${check}\`: ${fix}`);
  return `${lines.join("\n")}\n`;
}
