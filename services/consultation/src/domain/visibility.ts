import type { VisibilityRuleDoc, VisibilityRuleSetDoc } from './records';

export interface VisibilityContext {
  userType?: string;
  location?: string;
}

export interface Verdict {
  visible: boolean;
  reason: string;
}

/** The seller's rule set in force: default, active, and now within its validity window. */
export function ruleSetInForce(sets: VisibilityRuleSetDoc[], now: Date): VisibilityRuleSetDoc | null {
  return sets.find((set) => set.isDefault && set.isActive && set.validFrom <= now && now <= set.validTo) ?? null;
}

/** A condition lists values separated by commas (`*` is any); matching ignores case. */
export function ruleMatches(rule: VisibilityRuleDoc, context: VisibilityContext): boolean {
  const actual = (rule.type === 'user_type' ? context.userType : context.location)?.trim().toLowerCase();
  const values = rule.condition.split(',').map((value) => value.trim().toLowerCase());
  if (values.includes('*')) return true;
  return actual !== undefined && actual !== '' && values.includes(actual);
}

/**
 * Only an Approved and Published consultation can be visible; then the rules in force decide,
 * lowest priority first, the first match wins; with no match it is visible.
 */
export function decideVisibility(publiclyListed: boolean, ruleSet: VisibilityRuleSetDoc | null, context: VisibilityContext): Verdict {
  if (!publiclyListed) return { visible: false, reason: 'Not approved and published' };
  if (!ruleSet) return { visible: true, reason: 'Approved and published; no visibility rule set in force' };
  const rules = [...ruleSet.visibilityRules].sort((a, b) => a.priority - b.priority);
  const match = rules.find((rule) => ruleMatches(rule, context));
  if (!match) return { visible: true, reason: `No rule of "${ruleSet.name}" matched` };
  return {
    visible: match.action === 'show',
    reason: `Rule "${match.type} ${match.condition}" (priority ${match.priority}) of "${ruleSet.name}": ${match.action}`,
  };
}
