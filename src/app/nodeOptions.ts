/**
 * The Node options the operator started the primary with: its own command line and NODE_OPTIONS,
 * one option a string. What the primary adds for its instances never overrides one of these.
 */
export function operatorOptions(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/).filter((option) => option !== '')];
}
